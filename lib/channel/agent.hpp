// Agent: a node's end of the control channel (`sia-run agent`), as a library. A DEALER
// connects to the controller and says READY with the node's inventory, RunStatus, report
// offsets and lease (fence_after and its stops' grace, channel/lease.hpp); then, from the
// application loop (step()):
//   - ASSIGN (round, seq) is applied through the NodeBackend, one at a time, and ACKed
//     with the RunPlan and RunStatus; a repeat of a (round, seq) with the same content is
//     answered from the cached ACK without applying it again (a repeat that arrives while
//     it is being applied is ignored: its ACK follows); an ASSIGN older in (round, seq)
//     than the newest taken (a delayed or duplicated message) is refused with a log line,
//     never applied nor ACKed (the mark is forgotten at a fence and when a controller
//     says it does not know the agent, "not_ready");
//   - report lines are forwarded (REPORT) from the offsets the controller last said it
//     stored, in file order, at most report_batch_bytes per job and message;
//   - HEARTBEATs go out every heartbeat_interval; the controller's carry its stored offsets;
//   - a controller silent for heartbeat_interval x heartbeat_liveness is lost: the socket
//     is closed and a fresh one says READY again after a back-off that doubles from
//     backoff_min to backoff_max and resets once the controller answers. An ERROR
//     "not_ready" (a restarted controller) gets a READY on the same socket at once;
//   - an ERROR "unknown_node" (the node is not in the controller's cluster) ends the agent:
//     step() throws status 78 with the controller's reason;
//   - fencing: a controller silent for fence_after seconds makes the agent checkpoint-
//     stop its jobs (once, until the controller is back) and forget its cached ACK and
//     the newest (round, seq) it took.
// Trust: over tcp:// the controller's public key is pinned (CURVE), so a server with
// another key gets no READY; over ipc:// each connect first checks that no untrusted user
// could have bound the socket (channel/ipc_trust.hpp: status 77 ends the agent, a missing
// directory is waited for with the back-off); an abstract ipc://@NAME is refused (78).
// shutdown() stops the jobs unless told to keep them, then says BYE.
// Thread-safety: one thread drives an Agent (step, run, shutdown); request_stop() and
// the counters may be used from any thread or a signal handler's flag.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "channel/lease.hpp"
#include "channel/node_backend.hpp"
#include "channel/protocol.hpp"
#include "channel/security.hpp"
#include "channel/timing.hpp"

namespace sia::channel {

struct AgentOptions {
  std::string connect;  // the controller's endpoint
  std::string node;
  Inventory inventory;
  std::optional<ClientKeys> keys;  // CURVE; mandatory on tcp:// (the server key is pinned)
  // ipc://: besides root and this process's uid, the uid the controller runs as; the
  // socket's directories must be owned by these (channel/ipc_trust.hpp).
  std::optional<uid_t> controller_uid;
  double heartbeat_interval = kChannelTiming.heartbeat_interval;
  int heartbeat_liveness = kChannelTiming.heartbeat_liveness;
  double fence_after = kChannelTiming.fence_after;
  // Seconds from SIGTERM to SIGKILL when the node's applies stop a job (sia-run apply
  // --grace): with fence_after, the lease its READY says (channel/lease.hpp).
  double stop_grace = kChannelTiming.agent_grace;
  double backoff_min = kChannelTiming.backoff_min;
  double backoff_max = kChannelTiming.backoff_max;
  double report_scan_interval = kChannelTiming.report_scan_interval;
  std::size_t report_batch_bytes = 256 * 1024;
  // One log line, no newline; null: the library log (core/log.hpp), "agent: " first.
  std::function<void(const std::string&)> log;
};

class Agent {
 public:
  // Status 78: a tcp:// endpoint without keys, an abstract ipc://@NAME, a bad node name or
  // bad intervals.
  Agent(AgentOptions options, NodeBackend& node);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // One turn of the loop: connects when it is time, waits up to `max_wait` for the
  // controller, handles what came, and runs the timers.
  void step(std::chrono::milliseconds max_wait);

  // Steps until `stop` is non-zero, then shuts down: with stop == 1 it checkpoint-stops
  // the jobs first (unless keep_jobs), waiting until done or until stop > 1. Returns 0.
  int run(const std::atomic<int>& stop, bool keep_jobs);

  // Says BYE (after stopping the jobs when `stopped_jobs` says they were) and closes.
  void say_bye(const std::string& reason, bool stopped_jobs);

  // For tests and diagnostics.
  bool connected() const;  // the controller answered in the current session
  bool fenced() const;
  int sessions() const;  // READYs sent so far
  int applies() const;   // applies started
  int acks_from_cache() const;
  int stale_refused() const;  // ASSIGNs refused as older than one taken

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sia::channel
