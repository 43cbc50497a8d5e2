// Reconciliation: the pure decision of what sia-run does on one node, given the launches
// the placement wants there and the records of the state directory.
//   start    not running here: new on this node, a resume (preempted or killed), or an
//            ended job whose placement changed
//   restart  running, but its placement part changed (GPUs, GPU type, other nodes,
//            command): checkpoint-stop, then start the next generation
//   resize   running on the same GPUs, only its batch settings changed: a new batch plan
//            (SIA_BATCH_PLAN) for the running workers, same generation, same processes
//   stop     running here, but no longer placed on this node: checkpoint-stop
//   keep     running with an unchanged placement: left alone (same pids)
//   leave    ended by itself (finished, failed) or stopped by `sia-run stop`, and placed
//            as before: not started again until its placement changes; also a trial of
//            an app that stopped at its rung (its ranks exited 75 on their own under
//            SIA_STOP_FRACTION) and is wanted with the same budget, wherever it is
//            placed (`sia-run apply` only)
// `sia-run run` (Mode::run) starts failed and held jobs again; a finished job stays done.
// Thread-safety: pure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/job_launch.hpp"
#include "exec/state_dir.hpp"

namespace sia::exec {

enum class Action { start, restart, resize, stop, keep, leave };
const char* to_string(Action a);

enum class Mode { apply, run };

struct PlannedAction {
  std::string job;
  Action action = Action::keep;
  std::string reason;
  int generation = 0;     // the round started (start, restart) or the current one
  std::vector<int> gpus;  // this node's GPUs: wanted (start, restart, keep, leave) or held (stop)
  std::string warning;    // set by apply: e.g. a restore was expected and no checkpoint found
};

// One entry per job that is placed on this node or live in the state directory, sorted by
// name. `placed_elsewhere` names the jobs the placement has on other nodes only (for the
// reason of a stop). A job that starts, restarts or resumes gets the round after its last
// one on this node, and at least `round_floor`: the controller's round (the placement's
// metadata.round), so that every node of a multi-node job numbers it alike -- the round
// is in SIA_ROUND, the derived MASTER_PORT and the ranks' rendezvous check.
std::vector<PlannedAction> reconcile(const std::vector<JobLaunch>& wanted,
                                     const std::vector<JobRecord>& records,
                                     const std::set<std::string>& placed_elsewhere, Mode mode,
                                     int round_floor = 0);

}  // namespace sia::exec
