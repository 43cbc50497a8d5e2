// Finish-time fairness (Themis, NSDI '20; Sia §5.5): rho = a job's JCT in the shared
// cluster over its JCT alone on its fair share of the cluster. The fair share of GPU type t
// is its GPUs divided by the job's average contention (the mean number of active jobs
// over the rounds it was active); the isolated JCT on a share of V GPUs is simulated with
// the same policy on a one-type cluster where the job may use at most V GPUs (linear
// between floor(V) and ceil(V); below one GPU, the one-GPU JCT divided by V). On a
// heterogeneous cluster rho is the GPU-count-weighted mean of the per-type rho (Sia Eq. 6);
// the reference profile weights the per-type isolated JCTs instead, as the artifact does.
// Isolated runs are shared between jobs that would run identically (same model, batch
// settings, share and type) and start at a round boundary; a job submitted mid-round is
// credited the part of the round it did not wait.
// Thread-safety: as simulate().
#pragma once

#include <vector>

#include "sim/simulator.hpp"

namespace sia {

void add_finish_time_fairness(SimResult& result, const Cluster& cluster, const Catalog& catalog,
                              const std::vector<JobSpec>& workload, const SimOptions& options);

}  // namespace sia
