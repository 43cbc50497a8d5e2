// The steps `sia-run apply` and `sia-run run` share: read what the placement asks of this
// node (placement, job specs, cluster; every input is validated before anything is done)
// and make the node run it -- wait for jobs already stopping, reconcile, checkpoint-stop
// what moved away or changed, then start the new generations.
// Thread-safety: one thread; apply_node() expects the state directory's lock held.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "exec/commands.hpp"
#include "exec/executor.hpp"
#include "exec/reconcile.hpp"

namespace sia::exec {

struct NodeWork {
  std::string node;
  std::vector<JobLaunch> wanted;    // the jobs placed on this node
  std::set<std::string> elsewhere;  // jobs the placement has on other nodes only
  GenerationSettings settings;      // complete (cwd, ports, probes)
  int round = 0;                    // the placement's metadata.round (sia-ctl's), 0: none
};

// Status 64 (a bad flag value), 65 (a bad placement or job spec), 66 (a missing input),
// 78 (a bad cluster file, or a node that is not in it).
NodeWork read_node_work(const ApplyArgs& args);

// What reconciling `work` with the state directory gives, without acting.
std::vector<PlannedAction> plan_node_actions(const NodeWork& work, const StateDir& state,
                                             Mode mode);

// Acts; returns the actions taken. Supervisors are detached (apply) or children of the
// caller (run).
std::vector<PlannedAction> apply_node(const NodeWork& work, StateDir& state, Executor& executor,
                                      Mode mode, bool detached);

std::string host_name();

}  // namespace sia::exec
