// The flags several programs share, each defined once with one help text: --compat (the
// behaviour profile, core/compat.hpp), --cluster with its $SIA_CLUSTER default and
// --profile-store. The policy knobs' flags are made from their table (knob_flags.hpp).
// Include it from a program's main.cpp only (CLI11 is expensive to compile).
#pragma once

#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

#include "core/compat.hpp"

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

}  // namespace sia::cli
