#include "slurm/slurm_node_view.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace sia::slurm {

namespace {

std::string state_text(const SlurmNode& n) {
  std::string s = n.state;
  for (const auto& f : n.flags) s += "+" + f;
  return s;
}

std::string gpu_types(const SlurmNode& n, const SlurmSettings& settings) {
  std::vector<std::string> types;
  for (const auto& g : n.gpus) {
    auto it = settings.gres_types.find(g.type);
    std::string t = it == settings.gres_types.end() ? g.type : it->second;
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  }
  std::string out;
  for (const auto& t : types) out += (out.empty() ? "" : ",") + t;
  return out;
}

}  // namespace

std::vector<SlurmNodeView> node_views(const std::vector<SlurmNode>& nodes,
                                      const std::vector<SlurmJob>& jobs,
                                      const SlurmSettings& settings,
                                      const std::vector<OwnedJob>& records) {
  const auto usable = usable_gpus(nodes, jobs, settings, records);
  const auto owned = adopted(records, jobs);
  std::vector<SlurmNodeView> out;
  for (const auto& n : nodes) {
    SlurmNodeView v;
    v.name = n.name;
    v.state = state_text(n);
    v.gpu_type = gpu_types(n, settings);
    v.gpus = n.gpu_total();
    for (const auto& j : jobs) {
      if (!j.holds_nodes()) continue;
      (is_sia_job(j, owned) ? v.gpus_sia : v.gpus_other) += j.gpus_on(n.name);
    }
    auto it = usable.find(n.name);
    v.offered = it != usable.end() && it->second >= v.gpus;
    if (!n.in_partition(settings.partition)) {
      v.why = "not in partition " + settings.partition;
    } else if (!n.usable()) {
      v.why = "Slurm state " + v.state;
    } else if (v.gpus <= 0) {
      v.why = "no GPUs";
    } else if (!v.offered) {
      const long held = v.gpus - (it == usable.end() ? 0 : it->second);
      v.why = "other jobs hold " + std::to_string(held) + " of its GPUs";
    }
    out.push_back(v);
  }
  std::sort(out.begin(), out.end(),
            [](const SlurmNodeView& a, const SlurmNodeView& b) { return a.name < b.name; });
  return out;
}

nlohmann::json node_views_json(const std::vector<SlurmNodeView>& views) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& v : views) {
    nodes.push_back({{"name", v.name},
                     {"state", v.state},
                     {"gpu_type", v.gpu_type},
                     {"gpus", v.gpus},
                     {"gpus_sia", v.gpus_sia},
                     {"gpus_other", v.gpus_other},
                     {"offered", v.offered},
                     {"why", v.why}});
  }
  return {{"nodes", nodes}};
}

}  // namespace sia::slurm
