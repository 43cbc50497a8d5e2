// The baseline policies' knobs as command-line flags, shared by sia-solve and
// sia-ctl simulate so both spell, check and document them the same way: --seed,
// --gavel-reset, --themis-f, --themis-lease, --pollux-generations, --pollux-population;
// and the solver's limits: --node-limit, --iteration-limit, --time-limit.
// Include it from a program's main.cpp only (CLI11 is expensive to compile).
#pragma once

#include <CLI/CLI.hpp>

#include "policy/policy.hpp"

namespace sia::cli {

// Adds the flags to `app`, bound to the fields of `o` (defaults shown in --help).
inline void add_baseline_flags(CLI::App& app, PolicyOptions& o) {
  app.add_option("--seed", o.seed, "Seed of randomised policies")->capture_default_str();
  app.add_option("--gavel-reset", o.gavel_reset,
                 "Gavel: reset its time counters at most this often, seconds (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--themis-f", o.themis_f,
                 "Themis: fairness knob, the fraction of jobs not offered resources")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--themis-lease", o.themis_lease, "Themis: lease length in seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--pollux-generations", o.pollux_generations,
                 "Pollux: generations of the genetic search")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--pollux-population", o.pollux_population,
                 "Pollux: population of the genetic search")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
}

// The solver's work limits, --node-limit and --iteration-limit, and with `wall_clock` the
// --time-limit safety net (the live programs; the simulator runs on the work limits alone,
// so that its results do not depend on the machine).
inline void add_solver_limit_flags(CLI::App& app, PolicyOptions& o, bool wall_clock) {
  app.add_option("--node-limit", o.node_limit,
                 "Branch-and-bound nodes per MIP solve (0: none); bounds a solve in work, so "
                 "the answer does not depend on the machine")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--iteration-limit", o.iteration_limit,
                 "Simplex iterations per LP solve (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  if (wall_clock) {
    app.add_option("--time-limit", o.time_limit,
                   "Solver time limit in seconds, a safety net behind the work limits")
        ->capture_default_str();
  }
}

}  // namespace sia::cli
