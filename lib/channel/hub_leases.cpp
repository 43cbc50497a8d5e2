#include "channel/hub_leases.hpp"

#include <utility>

namespace sia::channel {

HubLeases::HubLeases(const HubOptions& o, std::function<void(const std::string&)> log)
    : heartbeat_interval_(o.heartbeat_interval),
      heartbeat_liveness_(o.heartbeat_liveness),
      fence_after_(o.fence_after),
      remembered_(o.remembered),
      assumed_(assumed_lease(o.fence_after)),
      down_after_(os::span(o.heartbeat_interval * o.heartbeat_liveness)),
      log_(std::move(log)) {}

double HubLeases::limit_of(const Lease& lease) const {
  return silence_limit(heartbeat_interval_, heartbeat_liveness_, lease);
}

void HubLeases::take_ready(NodeLease& n, const std::string& node,
                           const std::optional<Lease>& said) {
  take(n, node, said.value_or(assumed_));
}

void HubLeases::take_before_ready(NodeLease& n, const std::string& node) {
  take(n, node, lease_before_ready(remembered_, node, fence_after_));
}

void HubLeases::take(NodeLease& n, const std::string& node, const Lease& lease) {
  n.lease = lease;
  const double limit = limit_of(lease);
  n.limit = os::span(limit);
  if (limit > limit_of(assumed_) && n.said != limit) {
    log_("node " + node + ": its agent's lease (" + describe(lease) +
         ") is longer than this controller's (" + describe(assumed_) + "): it is fenced after " +
         os::fmt_seconds(limit) + " of silence, not " + os::fmt_seconds(limit_of(assumed_)));
    n.said = limit;
  }
}

}  // namespace sia::channel
