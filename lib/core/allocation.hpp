// Allocation: sia-solve's answer -- for every job either a configuration (n nodes, r GPUs
// of type t) with the batch it should run, or none and why -- plus how the answer was
// found (policy, solver status, objective, bound and relative gap).
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch_setting.hpp"
#include "core/cluster.hpp"
#include "core/configuration.hpp"

namespace sia {

// Why a job got what it got (sia-solve --explain).
struct Explanation {
  double value = 0;                   // its term in the objective
  double restart_factor = 1;          // applied off its current configuration
  double goodput = 0;                 // normalised goodput of the choice, after the restart factor
  bool pinned = false;                // inside a checkpoint-restore, or not preemptible
  int max_gpus = 0;                   // the scale-up cap the estimator applied
  std::optional<Config> alternative;  // the best configuration it did not get
  double alternative_goodput = 0;
  double alternative_value = 0;
};

struct JobAllocation {
  std::string job;
  std::optional<Config> config;  // none: the job waits
  BatchSetting batch;            // batch_size, local_bsz, accum_steps on the wire
  double goodput = 0;            // normalised goodput of the chosen configuration
  std::string reason;            // why it waits (empty when allocated)
  std::optional<Explanation> explain;
};

struct Allocation {
  Cluster cluster;
  std::string policy;
  std::string status;  // optimal | feasible | time-limit | infeasible
  std::string note;    // e.g. that pins were dropped because they exceed the cluster
  double objective = 0;
  double bound = 0;
  double gap = 0;
  std::vector<JobAllocation> jobs;  // sorted by name
  // A policy's own state between rounds (Gavel's time counters, Themis' leases...), as JSON
  // text; fed back through sia-solve --previous. Empty: none.
  std::string policy_state;
  // Jobs in submission order, when known (from the GoodputMatrix): the reference placer
  // takes jobs in this order before sorting by size, as the published simulator does.
  std::vector<std::string> order;

  const JobAllocation* find(const std::string& job) const;
};

nlohmann::json allocation_to_json(const Allocation& a);
Allocation parse_allocation(const Node& data);
// Reads jobs' allocations against a known cluster (e.g. a previous round's file).
std::vector<JobAllocation> parse_job_allocations(const Node& jobs, const Cluster& cluster);

}  // namespace sia
