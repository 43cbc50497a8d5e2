// Workloads with hyper-parameter searches (Themis' multi-job apps, Mahajan et al., NSDI
// '20: most apps of its trace are searches): a seeded generator that groups a share of a
// job trace into apps of 8-100 trials of one model, each trial with a sampled learning rate
// and a seeded quality, and the metric a simulated trial reports -- a loss that falls to
// its quality as it trains -- so that successive halving has something to rank.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/app_spec.hpp"
#include "core/job_spec.hpp"

namespace sia {

struct SearchOptions {
  double share = 0;  // of the jobs, grouped into searches (0..1)
  std::uint64_t seed = 1;
  int min_trials = 8, max_trials = 100;
  AppScheduler scheduler{AppSchedulerKind::successive_halving, 2, 3};
};

// Rewrites `jobs` (in submission order): runs of consecutive jobs become the trials of an
// app named after its first job ("search-NAME"); the trials keep their names and take the
// first job's model, settings and submission time. Returns the apps made.
std::vector<AppSpec> add_searches(std::vector<JobSpec>& jobs, const SearchOptions& options);

// The metric a simulated trial reports at `fraction` of its budget: quality + (1 - fraction)
// (a trial without a quality reports 1 - fraction).
double simulated_loss(const JobSpec& trial, double fraction);

}  // namespace sia
