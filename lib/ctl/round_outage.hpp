// RoundOutage: what a round's nodes say together when none answered -- every node of the
// cluster down, and whether for one reason (slurmctld not reachable, the network). Both
// `sia-ctl round` and the daemon say such an outage once, as one line, instead of a line
// per node (outage_line), and leave out the per-node "node N is down: REASON" warnings the
// one reason already says (said_by).
// Thread-safety: pure functions, plain values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace sia::ctl {

struct RoundOutage {
  bool outage = false;  // no node of the cluster up
  std::string reason;   // their one reason; empty: none, or several
};

// `nodes`: a round result's "nodes" (name, up, error); `cluster_nodes`: how many the
// cluster has (an empty cluster is no outage).
RoundOutage round_outage(const nlohmann::json& nodes, std::size_t cluster_nodes);

// Whether `warning` is a node's "node N is down: REASON" that the outage's one reason says.
bool said_by(const RoundOutage& outage, const std::string& warning);

// "no node answered: REASON; the round placed nothing" (or "... (see the node errors
// above)" when the nodes gave several reasons).
std::string outage_line(const RoundOutage& outage);

}  // namespace sia::ctl
