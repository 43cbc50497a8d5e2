// Synthetic scheduling rounds shaped like the Sia paper's scaling study: the heterogeneous
// 64-GPU cluster scaled k times (k = 1 .. 32 gives 64 .. 2,048 GPUs in 3 types) and about
// one active job per two GPUs, drawn with the shipped workloads' model mix. Most jobs have
// run: they hold a feasible current allocation and carry observations taken from the
// catalog's real measurements and gradient statistics from its validation tables.
// Deterministic for a seed. Benchmarks only.
#pragma once

#include <vector>

#include "core/cluster.hpp"
#include "model/catalog.hpp"
#include "model/job_state.hpp"

namespace sia::bench {

Cluster scaled_hetero_cluster(int scale);

struct SyntheticRound {
  Cluster cluster;
  std::vector<JobState> jobs;
};

SyntheticRound synthetic_round(const Catalog& catalog, int scale, int jobs, unsigned seed);

// Wall-clock helpers.
double now_seconds();
double median(std::vector<double> v);
double percentile(std::vector<double> v, double q);  // nearest rank

}  // namespace sia::bench
