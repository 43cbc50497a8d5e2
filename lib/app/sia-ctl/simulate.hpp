// `sia-ctl simulate` as a library call: load the cluster, the workload (a file, or a
// directory of them whose results are pooled), run the simulator, print a summary table
// for people or a SimResult document, per-job results as JSON Lines, per-round events,
// and the HTML report of all three (app/plot.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/tool.hpp"
#include "sim/simulator.hpp"

namespace sia::app {

struct SimulateArgs {
  std::string cluster;   // "" = the bundled heterogeneous 64-GPU cluster
  std::string workload;  // "" = the bundled Philly workload 1; a directory = all its files
  std::string catalog;
  std::string compat = "default";
  std::string jobs_out;         // per-job results (JSON Lines)
  std::string events_out;       // per-round records (JSON Lines)
  std::string report_out;       // the HTML report (sia-ctl plot's), written after the run
  bool no_timing = false;       // zero the wall-clock figures (byte-identical reruns)
  std::optional<double> round;  // --round: seconds, above 0 and at most a day; unset: the policy's
  std::optional<double> searches;  // --searches: share of the jobs grouped into searches
  std::uint64_t search_seed = 1;   // --search-seed
  SimOptions options;              // options.round is set from `round` by run_simulate
  cli::Format format = cli::Format::table;
};

int run_simulate(const SimulateArgs& args);

}  // namespace sia::app
