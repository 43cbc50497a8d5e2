// Contention, the N_avg of finish-time fairness (Themis, NSDI '20; Sia §5.5): over the
// rounds a fairness unit (an app; a job without an app is an app of one) was active, the
// mean number of units active with it. The simulator counts every app with a job submitted
// and not ended; the controller counts the units its round scheduled. Each counts a round
// once, here.
// Thread-safety: a plain value.
#pragma once

#include <cstdint>

namespace sia {

struct Contention {
  double contention_sum = 0;  // the units active, summed over the rounds counted
  std::int64_t rounds = 0;
  // Counts a round with `units` units active.
  void count(int units);
  // N_avg over the rounds counted (0 before the first).
  double n_avg() const;
  // N_avg once a round with `units` units is counted too.
  double n_avg_with(int units) const;
};

}  // namespace sia
