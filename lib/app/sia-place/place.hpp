// sia-place as a library call: an Allocation (with its cluster, or --cluster, and the
// previous Placement) to a Placement, or a table with --explain's notes.
// Thread-safety: reads files and writes stdout; no shared state.
#pragma once

#include <string>

#include "cli/tool.hpp"

namespace sia::app {

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
