// `sia-run agent` as a library call: checks its settings (the node in the cluster file,
// the keys: CURVE pinning the controller's key on every tcp endpoint), then runs an Agent
// on the node's sia-run state directory (SiaRunNode) until SIGTERM or SIGINT: the first
// checkpoint-stops the node's jobs (unless --keep-jobs) and says BYE, a second leaves at
// once.
// Errors: 64 usage, 66 a missing key or cluster file, 77 a secret key file not 0600 (or
// unreadable), 78 a bad cluster file, a node not in it, a state directory of another node,
// a tcp endpoint without keys, an abstract ipc://@NAME endpoint, an unknown
// --controller-user, a controller that refuses the node (not in its cluster); 77 an
// ipc:// socket in a directory someone untrusted could change (channel/ipc_trust.hpp).
// Returns 0 after a signal.
// Thread-safety: process-wide (signal handlers, children).
#pragma once

#include <string>

#include "channel/timing.hpp"

namespace sia::channel {

struct AgentArgs {
  std::string connect;
  std::string node;        // "" = the host name
  std::string state_dir;   // "" = sia-run's default
  std::string server_key;  // file with the controller's public key
  std::string secret_key;  // this agent's key file (0600)
  // ipc://: the controller's user (a name or uid), trusted besides root and this process's
  // user to own the socket's directories; "" = none.
  std::string controller_user;
  std::string cluster;  // "" = no inventory but the node name
  double heartbeat_interval = kChannelTiming.heartbeat_interval;
  int heartbeat_liveness = kChannelTiming.heartbeat_liveness;
  double fence_after = kChannelTiming.fence_after;
  bool keep_jobs = false;
  // Passed on to every sia-run apply: --grace (also the grace of the agent's lease),
  // --ckpt-root (when not empty), --report-interval (when > 0).
  double grace = kChannelTiming.agent_grace;
  std::string ckpt_root;
  double report_interval = -1;
};

int run_agent(const AgentArgs& args);

}  // namespace sia::channel
