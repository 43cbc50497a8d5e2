// Admission of a guaranteed job in the simulator (issue 34): admitted only if some
// configuration finishes its remaining work by its deadline on the GPUs the jobs already
// admitted leave free; then it holds the cheapest such configuration (fewest GPU-seconds)
// as its reservation until it ends. Plain inputs, so that the controller's admission
// (lib/deadline, branch dl-ctl) and this one can be folded into one function.
// Thread-safety: pure functions.
#pragma once

#include <vector>

namespace sia {

struct AdmissionOption {
  int type = 0;     // GPU type index
  int gpus = 0;     // GPUs of that type
  double rate = 0;  // work units per second on them (<= 0: unknown, never chosen)
};

struct AdmissionInput {
  double work = 0;  // remaining work, in the options' units x seconds
  std::vector<AdmissionOption> options;
  std::vector<int> free_gpus;  // per type: the cluster's minus the admitted jobs' reservations
  double now = 0;
  double deadline = 0;
  double margin = 0.1;  // the work is planned (1 + margin) times over
  double restart = 0;   // seconds of checkpoint-restore before the work starts
};

struct AdmissionDecision {
  bool admitted = false;
  int option = -1;    // index into the options: the cheapest that meets the deadline, else
                      // (refused) the one that would finish first; -1: none fits the GPUs
  double finish = 0;  // when that option finishes (seconds; +inf when none fits)
};

AdmissionDecision admit(const AdmissionInput& in);

}  // namespace sia
