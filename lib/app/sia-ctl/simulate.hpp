// `sia-ctl simulate` as a library call: load the cluster, the workload (a file, or a
// directory of them whose results are pooled), run the simulator, print a summary table
// for people or a SimResult document, per-job results as JSON Lines, per-round events,
// and the HTML report of all three (app/plot.hpp). A run that lasts more than
// kProgressAfter seconds shows its progress on stderr when stderr is a terminal (one line,
// rewritten) or with -v (a line at a time), at most once a second; stdout is unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/tool.hpp"
#include "sim/simulator.hpp"

namespace sia::app {

// The most jobs one workload may hold unless --max-jobs raises it: 100,000 jobs run for
// minutes with nothing to show and --events grows past a GB (sia-ctl(1), simulate).
inline constexpr long kDefaultMaxJobs = 20000;

struct SimulateArgs {
  std::string cluster;   // "" = the bundled heterogeneous 64-GPU cluster
  std::string workload;  // "" = the bundled Philly workload 1; a directory = all its files
  std::string catalog;
  std::string compat = "default";
  std::string jobs_out;             // per-job results (JSON Lines)
  std::string events_out;           // per-round records (JSON Lines)
  std::string report_out;           // the HTML report (sia-ctl plot's), written after the run
  bool no_timing = false;           // zero the wall-clock figures (byte-identical reruns)
  long max_jobs = kDefaultMaxJobs;  // --max-jobs: a workload with more is refused (65)
  std::optional<double> round;  // --round: seconds, above 0 and at most a day; unset: the policy's
  // Study transformations (sim/workload_transform.hpp), applied to every workload read.
  double rigid_share = 0;
  double strong_share = 0;
  std::uint64_t category_seed = 1;
  std::string deadlines;          // --deadlines SHARE[:SEED] (sim/deadline_transform.hpp); "": none
  std::string reservations;       // --reservations FILE (round/reservations.hpp); "": none
  std::optional<double> horizon;  // --horizon: seconds of simulated time
  int scale = 1;                  // workload copies and cluster multiple
  std::string profiling = "bootstrap";  // none | bootstrap | oracle
  std::string profile_store = profile_store_name(kDefaultProfileStore);  // off | fit | scale-up
  std::optional<double> searches;  // --searches: share of the jobs grouped into searches
  std::uint64_t search_seed = 1;   // --search-seed
  std::string search_scheduler = "successive-halving";  // --search-scheduler (or hyperband)
  SimOptions options;  // options.round is set from `round` by run_simulate
  cli::Format format = cli::Format::table;
};

int run_simulate(const SimulateArgs& args);

}  // namespace sia::app
