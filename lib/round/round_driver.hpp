// One round, the one sequence both the simulator (lib/sim) and the controller (lib/ctl)
// run; they differ only in their clock and in how decisions reach the jobs, the two
// implementations of RoundWorld:
//   1. collect: the jobs' state as of this round -- the simulator's jobs train for a
//      round of simulated time; the controller takes in its inbox, observes the nodes and
//      their reports and ends the jobs that ended on them (wall clock);
//   2. app phases: the app schedulers' step (round/app_phase.hpp), stopping the worse
//      trials and keeping those at their phase's budget waiting;
//   3. census: who the round is about (round/census.hpp) -- the jobs scheduled and the
//      fairness units active;
//   4. schedule: the scheduling pass on the census's jobs, estimate -> solve -> place
//      (round/schedule_pass.hpp; the controller's stages may be external programs), the
//      round's documents saved (round/round_documents.hpp) where asked;
//   5. fairness: the contention of the units active counted, and what finish-time
//      fairness needs of the round kept;
//   6. deliver: the decision reaches the jobs -- applied to the simulated jobs, or
//      journaled and handed to the nodes through the NodeDriver;
//   7. close: the round's record.
// Thread-safety: as the world's.
#pragma once

#include "round/census.hpp"

namespace sia {

class RoundWorld {
 public:
  virtual ~RoundWorld() = default;
  virtual void collect() = 0;
  virtual void app_phases() = 0;
  virtual Census census() = 0;
  virtual void schedule(const Census& census) = 0;
  virtual void book_fairness(const Census& census) = 0;
  virtual void deliver(const Census& census) = 0;
  virtual void close(const Census& census) = 0;
};

// Runs one round of `world`: its steps, in the order above.
void run_round(RoundWorld& world);

}  // namespace sia
