#include "sim/sim_quirks.hpp"

namespace sia {

SimQuirks sim_quirks(Compat compat) {
  SimQuirks q;
  if (compat != Compat::reference) return q;
  q.moves_by_node_only = true;
  q.spread_past_profiled_nodes = true;
  q.restart_on_shape_change = true;
  q.true_rates_for_baselines = true;
  q.no_profile_store = true;
  q.whole_round_gpu_seconds = true;
  q.rho_of_mean_isolated = true;
  q.p99_by_index = true;
  return q;
}

}  // namespace sia
