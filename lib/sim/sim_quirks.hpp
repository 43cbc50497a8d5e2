// How the published artifact's simulator (Sia, SOSP '23) runs a round differently from
// this one, one named flag per difference in the simulator's round and results (the
// estimator's are model/estimator_quirks.hpp, the policies' policy/policy_quirks.hpp, the
// placer's place/placer_quirks.hpp, a job's sim/sim_job.hpp). `--compat reference` turns them all
// on; the default profile has them all off. Nothing else in simulate() tests the profile.
// Thread-safety: a plain value.
#pragma once

#include "core/compat.hpp"

namespace sia {

struct SimQuirks {
  // A job moves only when its nodes or their GPU counts change, not its GPU indices.
  bool moves_by_node_only = false;
  // A shape over more nodes than the model was profiled on is spread evenly over that many.
  bool spread_past_profiled_nodes = false;
  // A job restarts whenever its GPU type or shape changes (not when the placer says).
  bool restart_on_shape_change = false;
  // Policies that read true rates (Gavel; policy.hpp: reads_true_rates) see the ground
  // truth's throughputs of the tuned configurations.
  bool true_rates_for_baselines = false;
  // The profile store (Sia+) is off.
  bool no_profile_store = false;
  // A job's GPU seconds: whole rounds of the GPUs allocated, shared over the types held.
  bool whole_round_gpu_seconds = false;
  // A job's rho: its JCT over the mean of its per-type isolated JCTs (not the mean of the
  // per-type rho).
  bool rho_of_mean_isolated = false;
  // The summary's p99 JCT: the sorted JCTs' element at index int(0.99 n), as the artifact
  // reads it, not the nearest rank.
  bool p99_by_index = false;
};

// The quirks of a profile: none for Compat::standard, all for Compat::reference.
SimQuirks sim_quirks(Compat compat);

}  // namespace sia
