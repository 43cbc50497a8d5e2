// sia-solve and sia-place as library calls.
#pragma once

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
  cli::Format format = cli::Format::json;
};

int run_solve(const SolveArgs& args);

struct PlaceArgs {
  std::string input = "-";  // Allocation
  std::string cluster;      // default: the allocation's own
  std::string previous;     // previous Placement (optional)
  std::string compat = "default";
  bool explain = false;
  cli::Format format = cli::Format::json;
};

int run_place(const PlaceArgs& args);

}  // namespace sia::app
