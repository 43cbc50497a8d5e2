// HubLeases: the hub's lease and fencing bookkeeping, the rule of lease.hpp applied per
// node. It promises:
//   - a node's lease is the one its agent's READY says, or for an agent that says none the
//     assumed one (assumed_lease of HubOptions::fence_after); before its READY (a node
//     known from the journal only) the one remembered from before the restart
//     (HubOptions::remembered) when it is the longer, else the assumed one (never a
//     remembered lease shorter than the assumed: lease_before_ready);
//   - its fence limit is that lease's silence_limit with the hub's heartbeats;
//   - a lease whose limit is longer than the assumed one's is taken (the node is fenced
//     later) and said in one log line, once per limit;
//   - an agent is down after heartbeat_interval x heartbeat_liveness of silence, and a down
//     one is fenced at its fence limit.
// Thread-safety: one thread, as the Hub's.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "channel/hub.hpp"
#include "channel/lease.hpp"
#include "os/clock.hpp"

namespace sia::channel {

// One node's lease as the hub holds it.
struct NodeLease {
  Lease lease;                  // its own (READY), the remembered or the assumed one
  os::Clock::Duration limit{};  // silence_limit of `lease`: fenced after that silence
  std::optional<double> said;   // the limit of a longer lease, logged already
};

class HubLeases {
 public:
  HubLeases() = default;
  // With the hub's options (checked: positive intervals, liveness >= 1); `log` takes the
  // longer lease's line (one line, no newline).
  HubLeases(const HubOptions& o, std::function<void(const std::string&)> log);

  // `node`'s agent said `said` in its READY (nullopt: no lease, the assumed one).
  void take_ready(NodeLease& n, const std::string& node, const std::optional<Lease>& said);
  // `node` is known from the journal only: the remembered lease when longer, else the
  // assumed one.
  void take_before_ready(NodeLease& n, const std::string& node);

  // Whether an agent silent for `silent` counts as down.
  bool down(os::Clock::Duration silent) const { return silent > down_after_; }
  // Whether a down agent silent for `silent` is fenced: its jobs count as stopped.
  static bool fenced(const NodeLease& n, os::Clock::Duration silent) { return silent >= n.limit; }

 private:
  void take(NodeLease& n, const std::string& node, const Lease& lease);
  double limit_of(const Lease& lease) const;

  double heartbeat_interval_ = 0;
  int heartbeat_liveness_ = 1;
  double fence_after_ = 0;
  std::map<std::string, Lease> remembered_;
  Lease assumed_;
  os::Clock::Duration down_after_{};
  std::function<void(const std::string&)> log_;
};

}  // namespace sia::channel
