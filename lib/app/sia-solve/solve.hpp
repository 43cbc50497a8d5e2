// sia-solve as a library call: a GoodputMatrix (and the previous Allocation) to an
// Allocation under a policy, or a table (-o table, with --explain's detail).
// Thread-safety: reads files and writes stdout; no shared state.
#pragma once

#include <set>
#include <string>

#include "cli/tool.hpp"
#include "policy/policy.hpp"

namespace sia::app {

struct SolveArgs {
  std::string input = "-";  // GoodputMatrix
  std::string previous;     // previous Allocation (optional)
  std::string policy = "sia";
  std::string compat = "default";
  PolicyOptions options;
  // The knobs given as flags (by key); the others are read from their environment
  // variables when set (policy/knobs.hpp), as an external solve stage receives them.
  std::set<std::string> knob_flags;
  cli::Format format = cli::Format::json;
};

int run_solve(const SolveArgs& args);

}  // namespace sia::app
