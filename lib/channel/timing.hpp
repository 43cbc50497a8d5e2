// The control channel's timing defaults, in one place: the hub (sia-ctl serve), the agent
// (sia-run agent), their flags and the configuration file (sia-config(5) [controller])
// take their defaults from here. The controller's and the agents' heartbeat settings and
// fence_after should agree (sia-run(1), "agent").
// Thread-safety: constants.
#pragma once

namespace sia::channel {

struct ChannelTiming {
  double heartbeat_interval = 1.0;  // seconds between heartbeats, both ways
  int heartbeat_liveness = 3;       // missed intervals before the other end counts as lost
  // Seconds of silence before an agent checkpoint-stops its jobs, and before the hub
  // counts an agent's jobs as lost.
  double fence_after = 30;
  // Seconds from SIGTERM to SIGKILL when an agent's node stops a job (sia-run agent
  // --grace; it bounds a fence's stop too, so it is part of the agent's lease,
  // channel/lease.hpp). Shorter than a lone sia-run apply's 120 s: with the kill margin it
  // is 30 s, no longer than fence_after, so the time before a silent node's jobs start
  // elsewhere is 1 x (3 + 1) + 30 + (20 + 10) = 64 s. A site whose checkpoints take longer
  // raises it; the agent's READY says so and the controller waits that much longer.
  double agent_grace = 20;
  double backoff_min = 1;             // the agent's reconnect back-off doubles from this...
  double backoff_max = 32;            // ...to this, in seconds
  double report_scan_interval = 0.5;  // seconds between the agent's looks at report files
  double client_timeout = 10;         // seconds a client waits for its REPLY
  double ack_timeout = 30;            // seconds a delivery waits for the nodes' ACKs
};

inline constexpr ChannelTiming kChannelTiming{};

}  // namespace sia::channel
