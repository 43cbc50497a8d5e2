// Workload and cluster transformations behind the simulator's study flags (the Sia paper's
// sensitivity and scale studies, Subramanya et al., SOSP '23, §5.7):
//  - assign_categories: a seeded draw makes a share of the jobs rigid and a share
//    strong-scaling (Figure 11); each job's draw depends only on the seed and the job's
//    name, so a job keeps its category when the shares grow (the rigid jobs at 25% are
//    among those at 50%);
//  - scale_workload / scale_cluster: every job repeated k times at the same submission time
//    with the same tuned configuration, and every node group k times as many nodes
//    (Figure 9, the published simulator's scale_kx workloads and --cluster_scale=k).
// Jobs that become rigid or strong-scaling need their tuned GPU count and batch (the
// artifact CSV's num_replicas and batch_size); a job without them is an error naming it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/cluster.hpp"
#include "core/job_spec.hpp"

namespace sia {

// Shares are fractions in [0, 1] whose sum is at most 1; throws Error(usage) otherwise.
// A job drawn u in [0, 1): u < rigid: rigid; u < rigid + strong: strong-scaling; else it
// keeps the category it had.
void assign_categories(std::vector<JobSpec>& jobs, double rigid_share, double strong_share,
                       std::uint64_t seed);

// The job's draw in [0, 1) for `seed` (exposed for tests).
double category_draw(const std::string& job, std::uint64_t seed);

// k >= 1 copies of every job, named NAME-c0 .. NAME-c(k-1) (k = 1: the jobs unchanged),
// in submission order.
std::vector<JobSpec> scale_workload(const std::vector<JobSpec>& jobs, int k);

// Every node group with k times as many nodes (named by the group's prefix; explicit node
// names and addresses are dropped); the cluster's name gains "-xK".
Cluster scale_cluster(const Cluster& cluster, int k);

// The largest k the two accept (k x the bundled clusters stays far below any limit).
inline constexpr int kMaxScale = 1024;

}  // namespace sia
