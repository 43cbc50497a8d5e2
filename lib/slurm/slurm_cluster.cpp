#include "slurm/slurm_cluster.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "core/names.hpp"
#include "slurm/job_mark.hpp"

namespace sia::slurm {

namespace {

[[noreturn]] void config_error(const std::string& what) {
  throw Error(ExitStatus::config, "slurm: " + what);
}

}  // namespace

std::vector<SlurmNode> read_nodes(CommandRunner& runner) {
  std::vector<std::string> argv{"scontrol"};
  for (auto& a : show_nodes_args()) argv.push_back(a);
  return parse_nodes(run_or_throw(runner, argv, kQueryTimeout));
}

std::vector<SlurmJob> read_jobs(CommandRunner& runner) {
  std::vector<std::string> argv{"scontrol"};
  for (auto& a : show_jobs_args()) argv.push_back(a);
  return parse_jobs(run_or_throw(runner, argv, kQueryTimeout));
}

std::vector<SlurmNode> offered_nodes(const std::vector<SlurmNode>& nodes,
                                     const SlurmSettings& settings) {
  std::vector<SlurmNode> out;
  for (const auto& n : nodes) {
    if (!n.usable() || !n.in_partition(settings.partition) || n.gpu_total() <= 0) continue;
    if (!valid_node_name(n.name)) {
      config_error("node \"" + n.name + "\": expected a node name of " + std::string(kNameRule));
    }
    if (!valid_node_address(n.address)) {
      config_error("node " + n.name + ": NodeAddr is not a node address (" +
                   std::string(kAddressRule) + ")");
    }
    out.push_back(n);
  }
  return out;
}

std::string node_gpu_type(const SlurmNode& node, const SlurmSettings& settings,
                          const std::set<std::string>& catalog_types) {
  std::string type;
  for (const auto& g : node.gpus) {
    if (g.type.empty()) {
      config_error("node " + node.name +
                   ": its GPUs have no type (Gres=gpu:N): declare Gres=gpu:TYPE:N");
    }
    if (!type.empty() && g.type != type) {
      config_error("node " + node.name + ": GPUs of two types (" + type + ", " + g.type +
                   "): sia needs one GPU type per node");
    }
    type = g.type;
  }
  if (auto it = settings.gres_types.find(type); it != settings.gres_types.end()) {
    return it->second;
  }
  if (catalog_types.count(type)) return type;
  config_error("node " + node.name + ": GPU type \"" + type +
               "\" is neither mapped in slurm.gres_types nor a catalog GPU type");
}

Cluster cluster_from_slurm(const std::vector<SlurmNode>& nodes, const SlurmSettings& settings,
                           const std::set<std::string>& catalog_types, const std::string& name) {
  Cluster c;
  c.name = name;
  c.description =
      "from Slurm" +
      (settings.partition.empty() ? std::string() : " (partition " + settings.partition + ")");
  std::map<std::string, std::string> first_of_type;  // type -> its first node
  for (const auto& n : offered_nodes(nodes, settings)) {
    std::string type = node_gpu_type(n, settings, catalog_types);
    const int gpus = static_cast<int>(std::min<long>(n.gpu_total(), 1 << 20));
    int ti = c.type_index(type);
    if (ti < 0) {
      c.types.push_back(GpuType{type, "", 0, gpus, 0});
      c.groups.push_back(NodeGroup{type, gpus, 0, type + "-", {}, {}});
      first_of_type[type] = n.name;
      ti = static_cast<int>(c.types.size()) - 1;
    }
    NodeGroup& g = c.groups[static_cast<std::size_t>(ti)];
    if (g.gpus_per_node != gpus) {
      config_error("node " + n.name + ": " + std::to_string(gpus) + " " + type +
                   " GPUs, but node " + first_of_type[type] + " has " +
                   std::to_string(g.gpus_per_node) + ": sia needs one node size per GPU type");
    }
    g.names.push_back(n.name);
    g.addresses.push_back(n.address);
    ++g.count;
  }
  if (c.groups.empty()) {
    throw Error(
        ExitStatus::unavailable,
        "slurm: no node with GPUs takes jobs" +
            (settings.partition.empty() ? std::string() : " in partition " + settings.partition));
  }
  c.finalize("slurm", ExitStatus::config);
  return c;
}

bool owns(const OwnedJob& owned, const SlurmJob& job) {
  if (job.user_id < 0 || job.user_id != owned.uid) return false;
  const std::optional<JobMark> mark = parse_mark_comment(job.comment);
  if (!mark || mark->job != owned.mark.job || mark->generation != owned.mark.generation) {
    return false;
  }
  if (owned.slurm_id == 0) {
    // Adoption: the submission's secret, where the record drew one, and its window.
    if (!owned.mark.token.empty() && mark->token != owned.mark.token) return false;
    return owned.intent_at <= 0 ||
           (job.submit_time >= owned.intent_at - kSubmitSlack &&
            job.submit_time <= owned.intent_at + kCommandTimeout + kSubmitSlack);
  }
  const std::string& id = job.het_job_id.empty() ? job.id : job.het_job_id;
  return id == std::to_string(owned.slurm_id);
}

const SlurmJob* owned_job(const OwnedJob& owned, const std::vector<SlurmJob>& jobs) {
  const SlurmJob* found = nullptr;
  for (const auto& j : jobs) {
    if (!owns(owned, j)) continue;
    if (!found || std::atol(j.id.c_str()) < std::atol(found->id.c_str())) found = &j;
  }
  return found;
}

std::vector<OwnedJob> adopted(const std::vector<OwnedJob>& owned,
                              const std::vector<SlurmJob>& jobs) {
  std::vector<OwnedJob> out;
  for (OwnedJob o : owned) {
    if (o.slurm_id == 0) {
      const SlurmJob* j = owned_job(o, jobs);
      if (!j) continue;
      o.slurm_id = std::atol((j->het_job_id.empty() ? j->id : j->het_job_id).c_str());
    }
    out.push_back(o);
  }
  return out;
}

bool is_sia_job(const SlurmJob& job, const std::vector<OwnedJob>& owned) {
  return std::any_of(owned.begin(), owned.end(), [&](const OwnedJob& o) { return owns(o, job); });
}

std::map<std::string, long> usable_gpus(const std::vector<SlurmNode>& nodes,
                                        const std::vector<SlurmJob>& jobs,
                                        const SlurmSettings& settings,
                                        const std::vector<OwnedJob>& records) {
  const std::vector<OwnedJob> owned = adopted(records, jobs);
  std::map<std::string, long> usable;
  for (const auto& n : offered_nodes(nodes, settings)) {
    usable[n.name] = n.gpu_total() - n.gpu_used();
  }
  for (const auto& j : jobs) {
    if (!j.holds_nodes() || !is_sia_job(j, owned)) continue;
    for (const auto& node : j.nodes) {
      auto known = std::find_if(nodes.begin(), nodes.end(),
                                [&](const SlurmNode& n) { return n.name == node; });
      if (known == nodes.end()) {
        throw Error(ExitStatus::data, "slurm: job " + j.id + " (" + j.comment +
                                          "): its node list names unknown node " + node);
      }
      if (auto it = usable.find(node); it != usable.end()) it->second += j.gpus_on(node);
    }
  }
  for (const auto& n : nodes) {
    if (auto it = usable.find(n.name); it != usable.end()) {
      it->second = std::clamp(it->second, 0L, n.gpu_total());
    }
  }
  return usable;
}

}  // namespace sia::slurm
