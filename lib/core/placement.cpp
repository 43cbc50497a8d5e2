#include "core/placement.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace sia {

using nlohmann::json;

int JobPlacement::gpu_count() const {
  int n = 0;
  for (const auto& ng : nodes) n += static_cast<int>(ng.gpus.size());
  return n;
}

std::vector<int> JobPlacement::shape() const {
  std::vector<int> s;
  for (const auto& ng : nodes) s.push_back(static_cast<int>(ng.gpus.size()));
  std::sort(s.rbegin(), s.rend());
  return s;
}

const JobPlacement* Placement::find(const std::string& job) const {
  auto it = std::lower_bound(jobs.begin(), jobs.end(), job,
                             [](const JobPlacement& a, const std::string& n) { return a.job < n; });
  return it != jobs.end() && it->job == job ? &*it : nullptr;
}

json placement_to_json(const Placement& p, const Cluster& cluster, bool explain) {
  json out;
  out["cluster_name"] = p.cluster_name;
  json jobs = json::array();
  for (const auto& j : p.jobs) {
    json nodes = json::array();
    for (const auto& ng : j.nodes) nodes.push_back({{"name", ng.node}, {"gpus", ng.gpus}});
    json x{{"name", j.job},
           {"gpu_type", cluster.types[j.type].name},
           {"nodes", nodes},
           {"restart", j.restart}};
    put_batch_setting(x, j.batch);
    if (explain) {
      auto it = p.notes.find(j.job);
      x["note"] = it == p.notes.end() ? "" : it->second;
    }
    jobs.push_back(std::move(x));
  }
  out["jobs"] = std::move(jobs);
  out["evicted"] = p.evicted;
  out["waiting"] = p.waiting;
  if (explain) {
    json reasons = json::object();
    for (const auto& w : p.waiting) {
      auto it = p.notes.find(w);
      reasons[w] = it == p.notes.end() ? "" : it->second;
    }
    out["waiting_reasons"] = reasons;
  }
  return out;
}

Placement parse_placement(const Node& data, const Cluster& cluster) {
  Placement p;
  p.cluster_name = data.string_or("cluster_name", cluster.name);
  std::map<std::string, const ClusterNode*> by_name;
  for (const auto& n : cluster.nodes) by_name[n.name] = &n;
  std::set<std::string> seen;
  std::set<std::pair<std::string, int>> used;
  data.at("jobs").each([&](const Node& j) {
    JobPlacement jp;
    Node name = j.at("name");
    jp.job = name.as_string();
    if (!seen.insert(jp.job).second) name.fail("duplicate job \"" + jp.job + "\"");
    Node type = j.at("gpu_type");
    jp.type = cluster.type_index(type.as_string());
    if (jp.type < 0) type.fail("unknown GPU type \"" + type.as_string() + "\"");
    Node job_nodes = j.at("nodes");
    std::set<std::string> job_node_names;
    job_nodes.each([&](const Node& n) {
      NodeGpus ng;
      Node nn = n.at("name");
      ng.node = nn.as_string();
      auto it = by_name.find(ng.node);
      if (it == by_name.end()) nn.fail("unknown node \"" + ng.node + "\"");
      if (!job_node_names.insert(ng.node).second) {
        nn.fail("node \"" + ng.node + "\" is listed twice for job \"" + jp.job + "\"");
      }
      if (it->second->type != jp.type) {
        nn.fail("node \"" + ng.node + "\" has GPUs of type \"" +
                cluster.types[it->second->type].name + "\", not \"" + cluster.types[jp.type].name +
                "\"");
      }
      Node gpus = n.at("gpus");
      gpus.each([&](const Node& g) {
        int idx = g.non_negative_int32();
        if (idx >= it->second->gpus) {
          g.fail("GPU index " + std::to_string(idx) + " out of range (node \"" + ng.node +
                 "\" has " + std::to_string(it->second->gpus) + " GPUs)");
        }
        if (!used.insert({ng.node, idx}).second) {
          g.fail("GPU " + std::to_string(idx) + " of node \"" + ng.node +
                 "\" is given to two jobs");
        }
        ng.gpus.push_back(idx);
      });
      if (ng.gpus.empty()) gpus.expected("at least one GPU index");
      std::sort(ng.gpus.begin(), ng.gpus.end());
      jp.nodes.push_back(std::move(ng));
    });
    if (jp.nodes.empty()) job_nodes.expected("at least one node (leave a waiting job out)");
    jp.restart = j.bool_or("restart", false);
    jp.batch = parse_batch_setting(j);
    p.jobs.push_back(std::move(jp));
  });
  std::sort(p.jobs.begin(), p.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  if (auto e = data.get("evicted")) p.evicted = e->as_strings();
  if (auto w = data.get("waiting")) p.waiting = w->as_strings();
  return p;
}

}  // namespace sia
