#include "channel/lease.hpp"

#include <algorithm>

#include "channel/timing.hpp"
#include "exec/executor.hpp"
#include "os/clock.hpp"

namespace sia::channel {

Lease agent_lease(double fence_after, double stop_grace) {
  return Lease{fence_after, stop_grace + exec::kKillMarginSeconds};
}

Lease assumed_lease(double fence_after) {
  return agent_lease(fence_after, kChannelTiming.agent_grace);
}

namespace {

// Seconds from the agent's last word from the controller until its jobs have surely ended.
double stop_span(const Lease& lease) {
  return std::max(lease.fence_after, lease.grace) + lease.grace;
}

}  // namespace

// The remembered lease only when it holds the node longer than the assumed one: the file
// is this controller's own, but what it says may be older than the agent (one restarted
// with a longer --fence-after or --grace while this controller was away, whose READY it
// never heard; a state directory restored from a backup). A remembered lease shorter than
// the assumed one would count the node's jobs stopped before that agent stops them; the
// longer one costs only failover time, until the node's READY says its own.
Lease lease_before_ready(const std::map<std::string, Lease>& remembered, const std::string& node,
                         double fence_after) {
  const Lease assumed = assumed_lease(fence_after);
  auto it = remembered.find(node);
  if (it == remembered.end()) return assumed;
  return stop_span(it->second) > stop_span(assumed) ? it->second : assumed;
}

double silence_limit(double heartbeat_interval, int heartbeat_liveness, const Lease& lease) {
  return heartbeat_interval * (heartbeat_liveness + 1) + stop_span(lease);
}

std::string describe(const Lease& lease) {
  return "fence_after " + os::fmt_seconds(lease.fence_after) + ", grace " +
         os::fmt_seconds(lease.grace);
}

}  // namespace sia::channel
