#include "policy/policy.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "policy/baselines.hpp"
#include "policy/sia_policy.hpp"

namespace sia {

static std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate_policy_options(const PolicyOptions& o) {
  if (!std::isfinite(o.p) || o.p == 0) {
    throw Error(ExitStatus::usage, "--p: the fairness power must be non-zero");
  }
  if (!std::isfinite(o.lambda_n) || (o.lambda_n > 0) == (o.p > 0) || o.lambda_n == 0) {
    throw Error(ExitStatus::usage,
                "--lambda-n: must have the opposite sign of --p (p = " + format_number(o.p) +
                    "): with the same sign leaving jobs waiting would score better than running "
                    "them");
  }
  if (std::fabs(o.lambda_n) <= 1) {
    throw Error(ExitStatus::usage,
                "--lambda-n: |lambda_n| must exceed 1, the smallest value of any allocation; "
                "otherwise jobs may be left waiting while GPUs idle");
  }
  if (!(o.lambda_a >= 0)) throw Error(ExitStatus::usage, "--lambda-a: must be >= 0");
  if (!(o.min_efficiency >= 0 && o.min_efficiency <= 1)) {
    throw Error(ExitStatus::usage, "--min-efficiency: must be between 0 and 1");
  }
  if (!(o.remaining_scale >= 0 && o.remaining_scale <= 1e12)) {
    throw Error(ExitStatus::usage, "--remaining-scale: must be >= 0 GPU-seconds and at most 1e12");
  }
  if (!(o.remaining_floor >= 0 && o.remaining_floor <= 1)) {
    throw Error(ExitStatus::usage, "--remaining-floor: must be between 0 and 1");
  }
  if (!(o.remaining_aging >= 0 && o.remaining_aging <= 1e12)) {
    throw Error(ExitStatus::usage, "--remaining-aging: must be >= 0 seconds and at most 1e12");
  }
  if (!(o.gpu_price >= 0 && o.gpu_price <= 1)) {
    throw Error(ExitStatus::usage, "--gpu-price: must be between 0 and 1");
  }
  if (!(o.hysteresis >= 0 && o.hysteresis <= 10)) {
    throw Error(ExitStatus::usage, "--hysteresis: must be between 0 and 10");
  }
  if (!(o.time_limit > 0 && o.time_limit <= 86400)) {
    throw Error(ExitStatus::usage, "--time-limit: must be > 0 seconds and at most 86400");
  }
  if (!(o.mip_gap >= 0)) throw Error(ExitStatus::usage, "--mip-gap: must be >= 0");
  if (o.node_limit < 0) throw Error(ExitStatus::usage, "--node-limit: must be >= 0 (0: none)");
  if (o.iteration_limit < 0) {
    throw Error(ExitStatus::usage, "--iteration-limit: must be >= 0 (0: none)");
  }
  if (!(o.gavel_reset >= 0 && o.gavel_reset <= 1e9)) {
    throw Error(ExitStatus::usage, "--gavel-reset: must be >= 0 seconds and at most 1e9");
  }
  if (!(o.themis_f >= 0 && o.themis_f <= 1)) {
    throw Error(ExitStatus::usage, "--themis-f: must be between 0 and 1");
  }
  if (!(o.themis_lease > 0 && o.themis_lease <= 1e9)) {
    throw Error(ExitStatus::usage, "--themis-lease: must be > 0 seconds and at most 1e9");
  }
  if (o.pollux_generations < 1) {
    throw Error(ExitStatus::usage, "--pollux-generations: must be >= 1");
  }
  if (o.pollux_population < 2) {
    throw Error(ExitStatus::usage, "--pollux-population: must be >= 2");
  }
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
