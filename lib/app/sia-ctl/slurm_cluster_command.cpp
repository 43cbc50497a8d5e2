// sia-ctl nodes under [slurm] (slurm_nodes_document: Slurm's live nodes as sia sees them,
// slurm/slurm_node_view.hpp) and sia-ctl slurm-cluster: the cluster description from Slurm
// (slurm/slurm_cluster.hpp), as cluster.toml (-o table) or a Cluster document (-o json, with the
// GPUs usable now per node in metadata.usable_gpus), to stdout or atomically to a file: nothing is
// written when Slurm cannot be read or a node cannot be described.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/sia-ctl/commands.hpp"
#include "core/document.hpp"
#include "ctl/slurm_driver.hpp"
#include "model/catalog.hpp"
#include "os/atomic_file.hpp"
#include "slurm/slurm_cluster.hpp"
#include "slurm/slurm_node_view.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

std::set<std::string> catalog_gpu_types(const std::string& dir) {
  Catalog catalog(dir.empty() ? default_catalog_dir() : dir);
  std::set<std::string> types;
  for (const auto& model : catalog.names()) {
    for (const auto& g : catalog.get(model).gpus) types.insert(g.name);
  }
  return types;
}

std::string toml_list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    s += (i ? ", " : "") + nlohmann::json(items[i]).dump();
  }
  return s + "]";
}

std::string cluster_toml(const Cluster& c) {
  std::string s = "# From Slurm (sia-ctl slurm-cluster).\nname = " + nlohmann::json(c.name).dump() +
                  "\ndescription = " + nlohmann::json(c.description).dump() + "\n";
  for (const auto& t : c.types)
    s += "\n[[gpu_types]]\nname = " + nlohmann::json(t.name).dump() + "\n";
  for (const auto& g : c.groups) {
    s += "\n[[node_groups]]\ngpu_type = " + nlohmann::json(g.gpu_type).dump() +
         "\ngpus_per_node = " + std::to_string(g.gpus_per_node) +
         "\ncount = " + std::to_string(g.count) + "\nnames = " + toml_list(g.names) +
         "\naddresses = " + toml_list(g.addresses) + "\n";
  }
  return s;
}

}  // namespace

json slurm_nodes_document(const Settings& config) {
  slurm::ProcessRunner runner(config.slurm);
  const auto nodes = slurm::read_nodes(runner);
  const auto jobs = slurm::read_jobs(runner);
  const auto records =
      SlurmDriver::load_records(config.controller.state_dir, static_cast<long>(::geteuid()));
  const auto views = slurm::node_views(nodes, jobs, config.slurm, SlurmDriver::owned_jobs(records));
  return {{"apiVersion", kApiVersion},
          {"kind", "SlurmNodeList"},
          {"metadata", {{"generator", "sia-ctl nodes"}}},
          {"data", slurm::node_views_json(views)}};
}

int run_slurm_cluster_command(const CtlArgs& args, const std::string& out) {
  Settings config = load_config(args.sources);
  const auto& settings = config.slurm;
  slurm::ProcessRunner runner(settings);
  auto nodes = slurm::read_nodes(runner);
  auto jobs = slurm::read_jobs(runner);
  std::string name = settings.partition.empty() ? "slurm" : settings.partition;
  Cluster cluster = slurm::cluster_from_slurm(nodes, settings,
                                              catalog_gpu_types(config.controller.catalog), name);
  std::string text;
  if (args.format == cli::Format::table) {
    text = cluster_toml(cluster);
  } else {
    const auto records =
        SlurmDriver::load_records(config.controller.state_dir, static_cast<long>(::geteuid()));
    auto usable = slurm::usable_gpus(nodes, jobs, settings, SlurmDriver::owned_jobs(records));
    nlohmann::json meta = {
        {"name", cluster.name}, {"generator", "sia-ctl slurm-cluster"}, {"usable_gpus", usable}};
    text = dump_document("Cluster", meta, cluster_to_json(cluster),
                         cli::stdout_is_tty() && out.empty()) +
           "\n";
  }
  if (out.empty() || out == "-") {
    cli::write_stdout(text);
  } else {
    os::write_file_atomic(out, text, 0644);
  }
  return 0;
}

}  // namespace sia::ctl
