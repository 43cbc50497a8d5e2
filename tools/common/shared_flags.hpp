// The flags several programs share, each defined once with one help text: --compat (the
// behaviour profile, core/compat.hpp), --cluster with its $SIA_CLUSTER default, and Sia's
// objective knobs --p, --lambda-n, --lambda-a (Sia §3.4), and the Sia+ knobs of the default
// profile (--min-efficiency, --hysteresis, --remaining-scale, --remaining-floor,
// --remaining-aging, --gpu-price, --restart-remaining).
// Include it from a program's main.cpp only (CLI11 is expensive to compile).
#pragma once

#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "core/compat.hpp"
#include "policy/policy.hpp"

namespace sia::cli {

// --compat default|reference, bound to `compat` (parsed later with parse_compat).
inline CLI::Option* add_compat_flag(CLI::App& app, std::string& compat) {
  return app
      .add_option("--compat", compat,
                  "Behaviour profile: default, or reference (the scheduler evaluated in the "
                  "Sia paper)")
      ->check(CLI::IsMember(compat_names()))
      ->capture_default_str();
}

// --cluster FILE, defaulting to $SIA_CLUSTER (read now; the flag wins). `what` says what
// the file is for; `otherwise`, when not empty, what is used without either.
inline CLI::Option* add_cluster_flag(CLI::App& app, std::string& cluster, const std::string& what,
                                     const std::string& otherwise = "") {
  if (const char* c = std::getenv("SIA_CLUSTER")) cluster = c;
  return app.add_option(
      "--cluster", cluster,
      what + " (default $SIA_CLUSTER" + (otherwise.empty() ? "" : ", else " + otherwise) + ")");
}

// Sia's --p, --lambda-n and --lambda-a, bound to `o` (defaults shown in --help).
inline void add_sia_objective_flags(CLI::App& app, PolicyOptions& o) {
  app.add_option("--p", o.p, "Sia: fairness power p (non-zero; < 0 favours fairness)")
      ->capture_default_str();
  app.add_option("--lambda-n", o.lambda_n,
                 "Sia: value of leaving a job waiting (|.| > 1, sign opposite to p)")
      ->capture_default_str();
  app.add_option("--lambda-a", o.lambda_a, "Sia: penalty for changing a job's allocation")
      ->capture_default_str();
}

// --profile-store off|fit|scale-up (Sia+, model/estimator.hpp), bound to `store` (parsed
// later with parse_profile_store).
inline CLI::Option* add_profile_store_flag(CLI::App& app, std::string& store) {
  return app
      .add_option("--profile-store", store,
                  "Sia+: share throughput measurements between jobs of the same model: off, "
                  "fit (fit each job's model to them too) or scale-up (fit, and let a job grow "
                  "to twice the GPUs its model ran with)")
      ->capture_default_str();
}

// The Sia+ knobs (PolicyOptions; ignored with --compat reference), bound to `o`.
inline void add_sia_plus_flags(CLI::App& app, PolicyOptions& o) {
  app.add_option("--min-efficiency", o.min_efficiency,
                 "Sia+: offer a job no configuration whose goodput per GPU is below this "
                 "fraction of its best on that GPU type (0: any)")
      ->capture_default_str();
  app.add_option("--hysteresis", o.hysteresis,
                 "Sia+: a job's current configuration counts this much more goodput (0: none)")
      ->capture_default_str();
  app.add_option("--remaining-scale", o.remaining_scale,
                 "Sia+: weight a job's values by 1 / (1 + its estimated GPU-seconds of work "
                 "left / this) (0: none)")
      ->capture_default_str();
  app.add_option("--remaining-floor", o.remaining_floor,
                 "Sia+: the least weight a job's values get (0 to 1)")
      ->capture_default_str();
  app.add_option("--remaining-aging", o.remaining_aging,
                 "Sia+: the floor rises to 1 over this many seconds of a job's age (0: never)")
      ->capture_default_str();
  app.add_option("--gpu-price", o.gpu_price,
                 "Sia+: lower each configuration's value by this much per GPU (0: none)")
      ->capture_default_str();
  app.add_flag("--restart-remaining,!--no-restart-remaining", o.restart_remaining,
               "Sia+: price a move's restart against the job's estimated time left as well as "
               "its age (default on)");
}

}  // namespace sia::cli
