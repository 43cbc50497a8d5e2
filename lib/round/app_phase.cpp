#include "round/app_phase.hpp"

namespace sia {

PhaseStep step_phase(SuccessiveHalving& sh, const std::vector<TrialProgress>& live) {
  PhaseStep step;
  const int phase = sh.phase();
  step.stops = sh.close_phase(live);
  step.closed = sh.phase() != phase;
  if (step.closed) return step;
  for (std::size_t k = 0; k < live.size(); ++k) {
    if (sh.reached(live[k])) step.at_budget.push_back(k);
  }
  return step;
}

}  // namespace sia
