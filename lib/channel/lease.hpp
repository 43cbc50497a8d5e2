// Lease: the one rule, known to both ends of the control channel, for when a node's jobs
// may count as stopped. An agent that has not heard its controller for `fence_after`
// seconds checkpoint-stops its jobs, and they have surely ended `grace` seconds later (the
// stop's SIGTERM-to-SIGKILL period and the kill margin, exec/executor.hpp). But an apply
// the agent began before (an ASSIGN heard no later than its last word from the controller)
// runs on -- it stops what leaves within `grace`, then may start a generation -- and the
// fence's stop begins only when it ended: at most max(fence_after, grace) after the last
// word. The controller stops hearing an agent at most one heartbeat interval before the
// agent stops hearing it (it counts the agent down after heartbeat_interval x
// heartbeat_liveness and sends nothing more), so it may count the node's jobs stopped after
//     heartbeat_interval x (heartbeat_liveness + 1) + max(fence_after, grace) + grace
// seconds of silence (silence_limit). The agent says its lease in READY; an agent that
// does not (an older one) is assumed to have the controller's fence_after and an agent's
// default grace with the margin (assumed_lease). After a restart the controller holds the
// last placement's nodes, until their READY, for the lease each one's agent said last
// (kept in the state directory, lease_memory.hpp) where that one is the longer, else --
// and for a node it never heard from -- for the assumed one (lease_before_ready).
// Thread-safety: plain values and pure functions.
#pragma once

#include <map>
#include <string>

namespace sia::channel {

struct Lease {
  double fence_after = 0;  // seconds without the controller before the agent's jobs stop
  double grace = 0;        // seconds from that stop until the jobs have surely ended
};

// The lease of an agent fencing after `fence_after` seconds whose applies stop jobs with
// `stop_grace` seconds from SIGTERM to SIGKILL (sia-run apply --grace); the grace counts
// the executor's kill margin too.
Lease agent_lease(double fence_after, double stop_grace);

// The lease a controller with `fence_after` assumes of an agent that does not say its own,
// and of a node it has not heard since its start: an agent's default grace
// (channel/timing.hpp) with the kill margin.
Lease assumed_lease(double fence_after);

// The lease a controller with `fence_after` holds `node` for before its agent's READY:
// the one `remembered` from the agent's last READY (LeaseMemory) when its silence limit is
// longer than assumed_lease's, else assumed_lease -- never a shorter one: the remembered
// lease may be older than the agent (one restarted with a longer lease while this
// controller was away), and holding a node too long costs failover time, too short safety.
// Its READY then says its own, shorter or not.
Lease lease_before_ready(const std::map<std::string, Lease>& remembered, const std::string& node,
                         double fence_after);

// Seconds of silence after which the controller may count a node's jobs stopped.
double silence_limit(double heartbeat_interval, int heartbeat_liveness, const Lease& lease);

// "fence_after 30.0 s, grace 30.0 s", for log lines.
std::string describe(const Lease& lease);

}  // namespace sia::channel
