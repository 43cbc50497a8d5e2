// How the estimator of the scheduler evaluated in the Sia paper (Subramanya et al.,
// SOSP '23) differs from this project's (Sia §3.2-3.3 as man/sia-estimate.1 documents it),
// one named flag per difference. `--compat reference` turns them all on; the default
// profile has them all off. Nothing else in the estimator tests the profile.
#pragma once

#include "core/compat.hpp"

namespace sia {

struct EstimatorQuirks {
  // Restart cost: the catalog's restart_penalty column instead of its restart_cost.
  bool catalog_restart_penalty = false;
  // A type has its own model only once the job ran on it and gradient statistics are
  // known (not from profiled measurements alone).
  bool models_only_from_running = false;
  // The replica cap divides the catalog's max batch (not the job's) by the smallest
  // local batch.
  bool catalog_batch_cap = false;
  // Replicas per type are capped at this many (0: no cap beyond the batch cap).
  int max_replicas_per_type = 0;
  // The scale-up rule counts the replicas observed on each type alone, caps each type
  // before the types share their largest bound, and does not cap again after sharing.
  bool scale_up_per_type = false;
  // An adaptive job's batch is tuned up to the workload's batch_size (when it has one)
  // rather than up to its max batch.
  bool workload_batch_cap = false;
  // Projection source: the first type with a model, not the multi-GPU type with the most
  // measurements.
  bool first_projection_source = false;
  // A type with a model of its own always uses it, even when only single-GPU runs back it
  // while another type has multi-GPU ones.
  bool own_model_always = false;
  // Projection ratio: the catalog's offline single-GPU throughputs, even when the job's
  // own single-GPU measurements on both types are known (Sia Eq. 1 uses the latter).
  bool catalog_throughput_ratio = false;
};

// The quirks of a profile: none for Compat::standard, all for Compat::reference.
EstimatorQuirks estimator_quirks(Compat compat);

}  // namespace sia
