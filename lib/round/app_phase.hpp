// The app schedulers' step of a round (policy/successive_halving.hpp): given one bracket's
// live trials (neither finished nor stopped) and how far each has trained, either the
// phase closes -- the worse trials are to stop now, their GPUs freed this round -- or the
// trials already at the phase's budget wait, out of the schedule, for the others. The
// simulator takes one step a round (its trials train no further than the budget); the
// controller steps again while phases close (its trials' reports may be past the next
// budget too).
// Thread-safety: a plain function on the caller's SuccessiveHalving.
#pragma once

#include <cstddef>
#include <vector>

#include "policy/successive_halving.hpp"

namespace sia {

struct PhaseStep {
  bool closed = false;                 // the phase closed: `sh` is at the next one
  std::vector<HalvingStop> stops;      // closed: the trials that stop now
  std::vector<std::size_t> at_budget;  // still open: the live trials (indices) at the budget
};

PhaseStep step_phase(SuccessiveHalving& sh, const std::vector<TrialProgress>& live);

}  // namespace sia
