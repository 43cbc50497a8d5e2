#include "channel/lease.hpp"

#include "exec/executor.hpp"
#include "exec/node_plan.hpp"
#include "os/clock.hpp"

namespace sia::channel {

Lease agent_lease(double fence_after, double stop_grace) {
  return Lease{fence_after, stop_grace + exec::kKillMarginSeconds};
}

double default_stop_grace() {
  return exec::GenerationSettings{}.grace;
}

Lease assumed_lease(double fence_after) {
  return Lease{fence_after, 0};
}

double silence_limit(double heartbeat_interval, int heartbeat_liveness, const Lease& lease) {
  return heartbeat_interval * (heartbeat_liveness + 1) + lease.fence_after + lease.grace;
}

std::string describe(const Lease& lease) {
  return "fence_after " + os::fmt_seconds(lease.fence_after) + ", grace " +
         os::fmt_seconds(lease.grace);
}

}  // namespace sia::channel
