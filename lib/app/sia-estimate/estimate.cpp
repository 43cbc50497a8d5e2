#include "app/sia-estimate/estimate.hpp"

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "core/compat.hpp"
#include "core/error.hpp"
#include "model/estimator.hpp"
#include "model/shared_profiles.hpp"
#include "os/atomic_file.hpp"

namespace sia::app {

using nlohmann::json;

static std::string render_table(const GoodputMatrix& m) {
  cli::Table t({"job", "config", "goodput", "raw", "batch", "local", "accum", "source"});
  for (const auto& r : m.jobs) {
    bool first = true;
    for (const auto& e : r.entries) {
      t.add({first ? r.job : "", format_config(e.config, m.cluster), cli::fixed(e.goodput, 3),
             cli::fixed(e.raw_goodput, 1), std::to_string(e.batch.global),
             std::to_string(e.batch.local), std::to_string(e.batch.accum_steps),
             to_string(e.source)});
      first = false;
    }
    if (r.entries.empty()) t.add({r.job, "-", "", "", "", "", "", "no usable GPU type"});
  }
  return t.render();
}

int run_estimate(const EstimateArgs& args) {
  if (args.cluster.empty()) {
    throw Error(ExitStatus::usage, "--cluster is required (or set SIA_CLUSTER)");
  }
  Cluster cluster = read_cluster(args.cluster);
  Catalog catalog(args.catalog.empty() ? default_catalog_dir() : args.catalog);
  std::vector<Document> docs;
  for (const auto& in : args.inputs) {
    auto d = read_documents(in, {"JobSpec", "Jobs"});
    docs.insert(docs.end(), std::make_move_iterator(d.begin()), std::make_move_iterator(d.end()));
  }
  std::vector<JobState> jobs = jobs_from_documents(docs);
  const Compat compat = parse_compat(args.compat);
  EstimatorOptions opt = estimator_options(compat);
  opt.scale_up = args.scale_up;
  if (args.no_projection) opt.project = false;
  if (args.no_seed_profiles) opt.seed_profiles = false;
  const ProfileStore store = parse_profile_store(args.profile_store);
  if (compat != Compat::reference) opt.profile_store = store;
  Estimator est(cluster, catalog, opt);
  if (!args.profiles.empty()) {
    for (const auto& p : read_shared_profiles(args.profiles)) est.share(p);
  }
  GoodputMatrix m = est.estimate(jobs);
  for (const auto& j : jobs) {
    if (!j.current) continue;
    const GoodputRow* row = nullptr;
    for (const auto& r : m.jobs) {
      if (r.job == j.spec.name) row = &r;
    }
    if (row && !row->current) {
      cli::info("sia-estimate",
                "warning: " + j.where("state.current") + ": " + std::to_string(j.current->gpus()) +
                    " GPU(s) of type \"" + j.current->gpu_type + "\" on " +
                    std::to_string(j.current->nodes()) + " node(s) cannot exist on cluster " +
                    cluster.name + "; treated as not running");
    }
  }
  for (const auto& r : m.jobs) {
    if (r.entries.empty()) {
      cli::info("sia-estimate",
                "warning: job " + r.job +
                    ": no configuration on this cluster (its allowed GPU types are missing, its "
                    "model has no measurements on them, or it needs more GPUs than they have); "
                    "it cannot be scheduled");
    }
  }
  if (!args.save_profiles.empty()) {
    for (const auto& j : jobs) est.record(j);
    os::write_file_atomic(
        args.save_profiles,
        shared_profiles_document(est.shared_profiles(), json{{"generator", "sia-estimate"}}),
        os::kPublicFile);
  }
  if (!args.save_jobs.empty()) {
    json list = json::array();
    for (const auto& j : jobs) list.push_back(job_state_to_json(j));
    os::write_file_atomic(args.save_jobs,
                          dump_document("Jobs", json::object(), json{{"jobs", list}}, true) + "\n",
                          os::kPublicFile);
  }
  if (args.format == cli::Format::table) {
    cli::write_stdout(render_table(m));
  } else {
    json meta{{"generator", "sia-estimate"}, {"cluster", cluster.name}};
    std::string doc = goodput_matrix_document(m, meta, cli::stdout_is_tty());
    doc += '\n';  // appended, not a 3 MB copy
    cli::write_stdout(doc);
  }
  return 0;
}

}  // namespace sia::app
