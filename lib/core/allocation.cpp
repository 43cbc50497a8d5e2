#include "core/allocation.hpp"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/goodput_matrix.hpp"

namespace sia {

using nlohmann::json;

const JobAllocation* Allocation::find(const std::string& job) const {
  auto it =
      std::lower_bound(jobs.begin(), jobs.end(), job,
                       [](const JobAllocation& a, const std::string& n) { return a.job < n; });
  return it != jobs.end() && it->job == job ? &*it : nullptr;
}

json allocation_to_json(const Allocation& a) {
  json out;
  out["cluster"] = cluster_to_json(a.cluster);
  out["policy"] = a.policy;
  out["status"] = a.status;
  if (!a.note.empty()) out["note"] = a.note;
  out["objective"] = a.objective;
  out["bound"] = a.bound;
  out["gap"] = a.gap;
  json jobs = json::array();
  for (const auto& j : a.jobs) {
    json x;
    x["name"] = j.job;
    if (j.config) {
      x["config"] = config_ref_to_json(*j.config, a.cluster);
      put_batch_setting(x, j.batch);
      x["goodput"] = j.goodput;
    } else {
      x["config"] = nullptr;
      if (!j.reason.empty()) x["reason"] = j.reason;
    }
    if (j.explain) {
      const Explanation& e = *j.explain;
      json ex{{"value", e.value},
              {"restart_factor", e.restart_factor},
              {"goodput", e.goodput},
              {"pinned", e.pinned},
              {"max_gpus", e.max_gpus}};
      if (e.alternative) {
        ex["alternative"] = config_ref_to_json(*e.alternative, a.cluster);
        ex["alternative"]["goodput"] = e.alternative_goodput;
        ex["alternative"]["value"] = e.alternative_value;
      } else {
        ex["alternative"] = nullptr;
      }
      x["explain"] = std::move(ex);
    }
    jobs.push_back(std::move(x));
  }
  out["jobs"] = std::move(jobs);
  if (!a.policy_state.empty()) out["policy_state"] = json::parse(a.policy_state);
  if (!a.order.empty()) out["order"] = a.order;
  return out;
}

std::vector<JobAllocation> parse_job_allocations(const Node& jobs, const Cluster& cluster) {
  std::vector<JobAllocation> out;
  std::set<std::string> seen;
  jobs.each([&](const Node& j) {
    JobAllocation x;
    Node name = j.at("name");
    x.job = name.as_string();
    if (!seen.insert(x.job).second) name.fail("duplicate job \"" + x.job + "\"");
    if (auto c = j.get("config")) {
      x.config = parse_config_ref(*c, cluster);
      x.batch = parse_batch_setting(j);
      x.goodput = j.number_or("goodput", 0);
    }
    x.reason = j.string_or("reason", "");
    out.push_back(std::move(x));
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  return out;
}

Allocation parse_allocation(const Node& data) {
  Allocation a;
  a.cluster = parse_cluster(data.at("cluster"));
  a.policy = data.string_or("policy", "");
  a.status = data.string_or("status", "");
  a.note = data.string_or("note", "");
  a.objective = data.number_or("objective", 0);
  a.bound = data.number_or("bound", 0);
  a.gap = data.number_or("gap", 0);
  a.jobs = parse_job_allocations(data.at("jobs"), a.cluster);
  if (auto o = data.get("order")) a.order = o->as_strings();
  if (auto ps = data.get("policy_state")) {
    if (!ps->is_object()) ps->expected("an object");
    a.policy_state = ps->json().dump();
  }
  return a;
}

}  // namespace sia
