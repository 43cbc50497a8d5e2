// Who a round is about, the same in the simulator and the controller: of the jobs known,
// the ones it schedules (arrived, not ended, not waiting), the ones that ended in it, and
// the fairness units active in it -- a unit (an app; a job without an app is an app of
// one) with a job arrived and not ended, waiting ones included (a trial at its app's rung;
// in the controller also a held, requeued or hung job). The units active are the round's
// contention (round/contention.hpp): each active unit counts the round with that many.
// Thread-safety: a plain function.
#pragma once

#include <vector>

namespace sia {

struct CensusEntry {
  bool ended = false;      // finished, failed or stopped, in this round or before
  bool ended_now = false;  // ended in this round
  bool arrived = true;     // submitted by now
  bool waiting = false;    // kept out of this round's schedule, still active
  int unit = 0;            // its fairness unit, 0 <= unit < units
};

struct Census {
  std::vector<int> active;        // indices of the jobs scheduled, in the entries' order
  std::vector<int> finished_now;  // indices of the jobs that ended this round
  std::vector<char> unit_active;  // per unit: a job of it arrived and not ended
  int active_units = 0;           // how many units are active
  int ended = 0;                  // how many jobs have ended
};

// The census of `jobs`, whose units are numbered 0 .. units - 1.
Census take_census(const std::vector<CensusEntry>& jobs, int units);

}  // namespace sia
