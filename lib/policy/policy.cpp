#include "policy/policy.hpp"

#include "core/error.hpp"
#include "policy/baselines.hpp"
#include "policy/knobs.hpp"
#include "policy/sia_policy.hpp"

namespace sia {

void validate_policy_options(const PolicyOptions& o) {
  check_knobs(o, {});
}

SolveLimits solve_limits(const PolicyOptions& o) {
  SolveLimits l;
  if (o.wall_clock) l.seconds = o.time_limit;
  l.iterations = o.iteration_limit;
  l.nodes = o.node_limit;
  return l;
}

const std::vector<PolicyInfo>& policy_table() {
  static const std::vector<PolicyInfo> table = {
      {"sia", 60, false, false,
       [](const PolicyOptions& o) -> std::unique_ptr<Policy> {
         return std::make_unique<SiaPolicy>(o);
       }},
      {"gavel", 360, true, true, make_gavel_policy},
      {"pollux", 60, false, false, make_pollux_policy},
      {"themis", 360, true, false, make_themis_policy},
      {"ftf-lp", 360, true, false, make_ftf_lp_policy},
      {"fifo", 60, true, false, make_fifo_policy},
      {"srtf", 60, true, false, make_srtf_policy},
      {"edf", 60, true, false, make_edf_policy},
      {"elasticflow", 60, false, false, make_elasticflow_policy},
  };
  return table;
}

const PolicyInfo* find_policy(const std::string& name) {
  for (const PolicyInfo& p : policy_table()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const PolicyInfo& p : policy_table()) names.emplace_back(p.name);
  return names;
}

std::string policy_list() {
  std::string list;
  for (const PolicyInfo& p : policy_table())
    list += (list.empty() ? "" : ", ") + std::string(p.name);
  return list;
}

double default_round(const std::string& policy) {
  const PolicyInfo* p = find_policy(policy);
  return p ? p->default_round : 60;
}

bool uses_tuned_jobs(const std::string& policy) {
  const PolicyInfo* p = find_policy(policy);
  return p && p->tuned_jobs;
}

bool reads_true_rates(const std::string& policy) {
  const PolicyInfo* p = find_policy(policy);
  return p && p->reference_true_rates;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options) {
  PolicyOptions o = options;
  if (!(o.round >= 0 && o.round <= 86400)) {
    throw Error(ExitStatus::usage, "--round: must be a number of seconds >= 0 and at most 86400");
  }
  if (o.round == 0) o.round = default_round(name);
  validate_policy_options(o);
  if (const PolicyInfo* p = find_policy(name)) return p->make(o);
  throw Error(ExitStatus::usage,
              "--policy: unknown policy \"" + name + "\" (known: " + policy_list() + ")");
}

}  // namespace sia
