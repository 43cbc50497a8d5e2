// Which nodes a round keeps out of training for the reservations (round/reservations.hpp),
// the same in the simulator and the controller. Per GPU type, `held` nodes are reserved:
//   1. the nodes reserved in the previous round stay reserved, as many as are still held
//      (when the reservation shrinks, the nodes earliest in the cluster's order are lent
//      back first);
//   2. more are taken back one at a time, each the node whose take-back costs least: the
//      GPUs of the jobs placed on it that still run (a job stopped loses its whole
//      placement, on every node, until it restarts elsewhere from its checkpoint), then
//      the fewer GPUs in use on the node; among equals the node latest in the cluster's
//      order. A job already stopped by an earlier pick costs nothing more, so the nodes of
//      one spread job go together.
// An idle node costs nothing and is always taken before a busy one. Taking back a busy
// node is a take-back: its jobs are stopped by checkpoint-stop (the next placement,
// without the node, moves them) and resume from their checkpoints.
// Thread-safety: a pure function.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/cluster.hpp"

namespace sia {

// A job's GPUs on one node, as the previous round placed it.
struct NodeUse {
  std::string node;
  std::string job;
  int gpus = 0;
};

struct TakeBack {
  std::string node;
  std::vector<std::string> jobs;  // placed on it last round, sorted
  int gpus = 0;                   // GPUs in use on it last round
};

struct ReservedChoice {
  std::set<std::string> nodes;       // reserved this round
  std::vector<TakeBack> taken_back;  // newly reserved nodes that were in use, in pick order
};

// The nodes of `cluster` reserved this round: `held[t]` of type t (clamped to its nodes),
// `before` those reserved last round, `uses` last round's placement.
ReservedChoice choose_reserved(const Cluster& cluster, const std::vector<int>& held,
                               const std::set<std::string>& before,
                               const std::vector<NodeUse>& uses);

// `cluster` less the `reserved` nodes, its GPU types kept in their order (a type may be
// left with no node: the policy and placer see no capacity there, and a type's index is the
// same in both clusters). For use in process only: such a cluster is not a valid Cluster
// document.
Cluster cluster_lending(const Cluster& cluster, const std::set<std::string>& reserved);

}  // namespace sia
