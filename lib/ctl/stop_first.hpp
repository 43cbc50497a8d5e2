// stop_first: the rule both node drivers follow so that two generations of one job never
// run at the same time, on any of its nodes. Each node's apply stops a job's old ranks
// before it starts the new ones, but only its own: a job on several nodes that starts a
// new generation (a move, growth or shrink across nodes, a new shape or GPU type on the
// same nodes, a new attempt) would otherwise start on one node while its old ranks still
// checkpoint on another. Such a job is delivered in two phases: first every node gets the
// placement without it (the nodes that run it checkpoint-stop it), then, once every node
// that ran it acknowledged that (or is down for good), the nodes it goes to get it.
// A job that runs on one node and stays on it alone is left to that node's apply, and a
// job that starts no new generation (its `restart` flag unset: a batch-size change at most,
// or some of its nodes' ranks ended and wait for its next attempt) goes out at once.
// Thread-safety: a pure function.
#pragma once

#include <set>
#include <string>

#include "core/placement.hpp"

namespace sia::ctl {

// `running_on`: the nodes that run the job now, or may be starting it (an ASSIGN not yet
// acknowledged); `to`: its placement this round (its `restart` flag: a new generation --
// not the same GPU type, nodes and GPUs as in the last placement, not in it, or a new
// attempt after its ranks lost their peers).
bool stop_first(const std::set<std::string>& running_on, const JobPlacement& to);

}  // namespace sia::ctl
