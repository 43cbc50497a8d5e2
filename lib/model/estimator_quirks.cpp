#include "model/estimator_quirks.hpp"

namespace sia {

EstimatorQuirks estimator_quirks(Compat compat) {
  EstimatorQuirks q;
  if (compat != Compat::reference) return q;
  q.catalog_restart_penalty = true;
  q.models_only_from_running = true;
  q.catalog_batch_cap = true;
  q.max_replicas_per_type = 64;
  q.scale_up_per_type = true;
  q.workload_batch_cap = true;
  q.first_projection_source = true;
  q.own_model_always = true;
  q.catalog_throughput_ratio = true;
  return q;
}

}  // namespace sia
