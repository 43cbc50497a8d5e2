// Themis' state between rounds, to and from its JSON text: themis_state.hpp.
#include "policy/themis_state.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "core/node.hpp"

namespace sia::themis {

using json = nlohmann::json;

std::string state_to_text(const State& s, const Cluster& cluster) {
  json jobs = json::object();
  for (const auto& [name, m] : s.jobs) {
    json j{{"contention_sum", m.contention_sum}, {"rounds", m.rounds}};
    if (m.lease) {
      const Lease& l = *m.lease;
      j["lease"] = {
          {"gpu_type", l.gpu_type}, {"nodes", l.nodes},     {"gpus", l.gpus}, {"start", l.start},
          {"end", l.end},           {"payment", l.payment}, {"how", l.how}};
    }
    jobs[name] = std::move(j);
  }
  json out{{"round", s.round}, {"jobs", std::move(jobs)}};
  if (s.placement) out["placement"] = placement_to_json(*s.placement, cluster);
  return out.dump();
}

State state_from_text(const std::string& text, const Cluster& cluster) {
  State s;
  const json j = parse_json_bounded(text);
  if (j.is_discarded()) {
    throw Error(ExitStatus::data,
                "previous allocation: policy_state: not a themis state (not "
                "JSON, or nested too deeply)");
  }
  const Node root(j, "previous allocation", "policy_state");
  if (!root.is_object()) root.expected("a themis state (an object)");
  if (auto placement = root.get("placement")) {
    if (placement->string_or("cluster_name", "") == cluster.name) {
      s.placement = parse_placement(*placement, cluster);
    }
  }
  s.round = root.at("round").as_int();
  const Node jobs = root.at("jobs");
  if (!jobs.is_object()) jobs.expected("an object");
  for (const auto& name : jobs.keys()) {
    const Node v = jobs.at(name);
    Memory m;
    m.contention_sum = v.at("contention_sum").as_number();
    m.rounds = v.at("rounds").as_int();
    if (auto l = v.get("lease")) {
      Lease lease;
      lease.gpu_type = l->at("gpu_type").as_string();
      lease.nodes = l->at("nodes").int32();
      lease.gpus = l->at("gpus").int32();
      lease.start = l->at("start").as_int();
      lease.end = l->at("end").as_int();
      lease.payment = l->at("payment").as_number();
      lease.how = l->at("how").as_string();
      m.lease = lease;
    }
    s.jobs[name] = std::move(m);
  }
  return s;
}

}  // namespace sia::themis
