// The baseline policies Sia is compared with, behind the Policy interface (policy.hpp):
//  - gavel:  Gavel's max-sum-throughput LP over the jobs' tuned fixed configurations,
//            realised per round by priority round-robin with time-sharing (gavel.cpp);
//  - ftf-lp: the min-max finish-time-fairness LP the Sia artifact calls "Themis", realised
//            the same way (gavel.cpp);
//  - fifo, srtf: first-come-first-served and shortest-remaining-time-first on the tuned
//            configurations, for sanity (gavel.cpp);
//  - pollux: Pollux's heterogeneity-unaware genetic search on virtual 4-GPU nodes, then
//            each job keeps its majority GPU type (pollux.cpp);
//  - edf:    earliest deadline first on the tuned configurations, as fifo (gavel.cpp);
//  - elasticflow: ElasticFlow's minimum satisfactory shares for guaranteed jobs, then
//            greedy marginal-gain growth, one GPU type per job (elasticflow.cpp);
//  - themis: the Themis auction -- finish-time-fairness bids, partial allocation with
//            hidden payments, leases, leftover allocation (themis.cpp).
// Each factory validates its own options (Error, usage) and returns a fresh policy object
// whose state (time counters, leases, populations) lives across allocate() calls and is
// also written to Allocation::policy_state for the one-shot CLI.
// Thread-safety: as Policy.
#pragma once

#include <memory>

#include "policy/policy.hpp"

namespace sia {

std::unique_ptr<Policy> make_gavel_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_ftf_lp_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_fifo_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_srtf_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_pollux_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_themis_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_edf_policy(const PolicyOptions& options);
std::unique_ptr<Policy> make_elasticflow_policy(const PolicyOptions& options);

}  // namespace sia
