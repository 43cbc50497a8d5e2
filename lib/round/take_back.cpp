#include "round/take_back.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace sia {

ReservedChoice choose_reserved(const Cluster& cluster, const std::vector<int>& held,
                               const std::set<std::string>& before,
                               const std::vector<NodeUse>& uses) {
  std::map<std::string, int> job_gpus;                        // a job's GPUs, all nodes
  std::map<std::string, std::map<std::string, int>> on_node;  // node -> job -> GPUs
  for (const auto& u : uses) {
    job_gpus[u.job] += u.gpus;
    on_node[u.node][u.job] += u.gpus;
  }
  ReservedChoice out;
  std::set<std::string> stopped;
  for (std::size_t t = 0; t < cluster.types.size() && t < held.size(); ++t) {
    const std::vector<int> nodes = cluster.nodes_of_type(static_cast<int>(t));
    int want = std::clamp(held[t], 0, static_cast<int>(nodes.size()));
    std::vector<char> taken(nodes.size(), 0);
    // 1. Those reserved before, the latest in the cluster's order kept.
    for (std::size_t k = nodes.size(); k-- > 0 && want > 0;) {
      if (!before.count(cluster.nodes[nodes[k]].name)) continue;
      taken[k] = 1;
      --want;
      out.nodes.insert(cluster.nodes[nodes[k]].name);
    }
    // 2. The cheapest take-backs, one at a time.
    for (; want > 0; --want) {
      std::size_t best = nodes.size();
      std::tuple<int, int> best_cost;
      for (std::size_t k = nodes.size(); k-- > 0;) {
        if (taken[k]) continue;
        int lost = 0, in_use = 0;
        if (auto it = on_node.find(cluster.nodes[nodes[k]].name); it != on_node.end()) {
          for (const auto& [job, g] : it->second) {
            in_use += g;
            if (!stopped.count(job)) lost += job_gpus[job];
          }
        }
        const std::tuple<int, int> cost{lost, in_use};
        if (best == nodes.size() || cost < best_cost) {
          best = k;
          best_cost = cost;
        }
      }
      taken[best] = 1;
      const std::string& name = cluster.nodes[nodes[best]].name;
      out.nodes.insert(name);
      if (auto it = on_node.find(name); it != on_node.end() && !it->second.empty()) {
        TakeBack tb{name, {}, 0};
        for (const auto& [job, g] : it->second) {
          tb.jobs.push_back(job);
          tb.gpus += g;
          stopped.insert(job);
        }
        out.taken_back.push_back(std::move(tb));
      }
    }
  }
  return out;
}

Cluster cluster_lending(const Cluster& cluster, const std::set<std::string>& reserved) {
  Cluster c = cluster;
  if (reserved.empty()) return c;
  c.nodes.clear();
  for (auto& t : c.types) t.node_count = 0;
  for (const auto& n : cluster.nodes) {
    if (reserved.count(n.name)) continue;
    ClusterNode kept = n;
    kept.index_in_type = c.types[n.type].node_count++;
    c.nodes.push_back(std::move(kept));
  }
  std::size_t node = 0;
  for (auto& g : c.groups) {
    const int count = g.count;
    g.names.clear();
    g.addresses.clear();
    for (int k = 0; k < count; ++k, ++node) {
      const ClusterNode& n = cluster.nodes[node];
      if (reserved.count(n.name)) continue;
      g.names.push_back(n.name);
      g.addresses.push_back(n.address);
    }
    g.count = static_cast<int>(g.names.size());
  }
  return c;
}

}  // namespace sia
