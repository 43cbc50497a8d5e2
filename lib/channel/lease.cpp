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

Lease lease_before_ready(const std::map<std::string, Lease>& remembered, const std::string& node,
                         double fence_after) {
  auto it = remembered.find(node);
  return it != remembered.end() ? it->second : assumed_lease(fence_after);
}

double silence_limit(double heartbeat_interval, int heartbeat_liveness, const Lease& lease) {
  return heartbeat_interval * (heartbeat_liveness + 1) + std::max(lease.fence_after, lease.grace) +
         lease.grace;
}

std::string describe(const Lease& lease) {
  return "fence_after " + os::fmt_seconds(lease.fence_after) + ", grace " +
         os::fmt_seconds(lease.grace);
}

}  // namespace sia::channel
