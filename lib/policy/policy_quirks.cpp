#include "policy/policy_quirks.hpp"

namespace sia {

PolicyQuirks policy_quirks(Compat compat) {
  PolicyQuirks q;
  if (compat != Compat::reference) return q;
  q.sia_without_plus = true;
  q.sia_clipped_cost = true;
  q.sia_solver_ties = true;
  q.sia_pins_unpriced = true;
  q.sia_glpk_only = true;
  q.gavel_analytic_centre = true;
  q.gavel_ties_by_submission = true;
  q.gangs_by_gpu_count = true;
  q.themis_unchecked_grants = true;
  return q;
}

}  // namespace sia
