// How the policies of the scheduler evaluated in the Sia paper (Subramanya et al., SOSP
// '23, its published artifact) differ from this project's, one named flag per difference.
// `--compat reference` turns them all on, to compare against the paper's numbers; the
// default profile has them all off. policy_quirks() is the one place a profile sets them;
// nothing else in lib/policy tests the profile. (The estimator's are in
// model/estimator_quirks.hpp, the placer's in place/placer_quirks.hpp, the simulated
// jobs' in sim/sim_job.hpp.)
// Thread-safety: plain values.
#pragma once

#include "core/compat.hpp"

namespace sia {

struct PolicyQuirks {
  // sia: the Sia+ knobs (min_efficiency, hysteresis, remaining-work priority, gpu_price,
  // restart_remaining) are ignored. The artifact has none of them; they are this
  // project's, measured better (PolicyOptions says what each buys).
  bool sia_without_plus = false;
  // sia: a configuration's cost is goodput^p rounded to two decimals and capped at 3000,
  // and one without goodput costs 3000 (p < 0) instead of being dropped, as the artifact
  // wrote its objective. The rounding makes near-equal configurations tie.
  bool sia_clipped_cost = false;
  // sia: no deterministic tie-breaking terms (keep the current configuration, then fewer
  // GPUs, then type order); the artifact leaves ties to whatever the solver returns.
  bool sia_solver_ties = false;
  // sia: a pinned job (inside a checkpoint-restore, or running and non-preemptible) pays
  // no restart factor on its other configurations, and a pinned rigid job offers only its
  // current one: the artifact's cost rows for pinned jobs. They matter only when the pins
  // no longer fit and are dropped.
  bool sia_pins_unpriced = false;
  // sia: the MILP is solved by GLPK alone, not by the dynamic programme first; the
  // artifact's solver. The answers agree up to ties and the gap.
  bool sia_glpk_only = false;
  // gavel: the LP's answer is the analytic centre of the optimal face (the artifact's
  // ECOS, an interior-point solver), not the simplex's vertex, which spreads time over
  // equal jobs and types and so moves more jobs between rounds.
  bool gavel_analytic_centre = false;
  // gavel, ftf-lp: ties in the priority list go by type order, then submission order (the
  // artifact's stable sort), not by job name then type order.
  bool gavel_ties_by_submission = false;
  // gavel, ftf-lp, fifo, srtf: room for a gang is the type's free GPU count, as the
  // artifact counts it (its placer may split gangs over nodes), not whether the gang packs
  // onto the type's nodes as this project's placer places it.
  bool gangs_by_gpu_count = false;
  // themis: grants are not checked against the placer (a gang the placer cannot place
  // beside the running ones keeps its grant), as the artifact's placer never refuses.
  bool themis_unchecked_grants = false;
};

// The quirks of a profile: none for Compat::standard, all for Compat::reference.
PolicyQuirks policy_quirks(Compat compat);

}  // namespace sia
