// The baseline policies' knobs as command-line flags, shared by sia-solve and
// sia-ctl simulate so both spell, check and document them the same way: --seed,
// --gavel-reset, --themis-f, --themis-lease, --pollux-generations, --pollux-population.
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

}  // namespace sia::cli
