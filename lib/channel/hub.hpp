// Hub: the controller's end of the control channel -- a ROUTER that the sia-run agents and
// the clients connect to. It has no thread of its own (the ZAP handler excepted): the
// controller's loop calls poll(), which waits for traffic or a timer, handles it and
// returns what happened as events. The hub
//   - knows every agent by node: its inventory, RunStatus, job summary, when it was last
//     heard, and whether it is up (heard within heartbeat_interval x heartbeat_liveness)
//     or fenced (silent for its lease's silence limit, channel/lease.hpp: by now the agent
//     has checkpoint-stopped its jobs and they have ended, so they may run elsewhere). The
//     lease is the one the agent's READY says, else assumed; before its READY (a node
//     known from the journal only, confirm_reports) the one `remembered`, else assumed --
//     the rules of channel/hub_leases.hpp;
//   - sends each agent a HEARTBEAT every heartbeat_interval, carrying how far the
//     controller has stored each job's reports (the agent resumes from there);
//   - sends ASSIGN (round, seq) and resends it every resend_interval until the agent
//     ACKs it; a newer ASSIGN to the node replaces an unacknowledged one; a node that is
//     fenced loses its unacknowledged ASSIGN;
//   - hands out REPORT lines once each, deduplicated by (node, job, offset);
//   - answers client requests (SUBMIT, STATUS, ...) through the RequestHandler, from
//     poll(), and refuses them from agent keys, and unread when over max_request_bytes;
//   - answers LOGS requests later (set_log_planner): it sends the agent of the node that
//     holds the log a LOG_FETCH and replies to the client when that agent's LOG arrives,
//     or with status 69 when the node is not connected or does not answer in time.
// Security: with a server key and an allow-list every peer is authenticated by CURVE and
// the ZAP handler, and the identity comes from its key; a READY, ACK, REPORT, HEARTBEAT or
// BYE naming another node than its key's is refused, as is anything an agent sends
// before READY. Without keys (ipc:// only, in a private directory: a peer is the
// controller's own user, see security.hpp) an agent is the node its READY claims, for
// that connection. Refusals are logged with the key.
// Thread-safety: one thread calls everything (poll, assign, ...); see ZapHandler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "channel/allow_list.hpp"
#include "channel/identity.hpp"
#include "channel/keys.hpp"
#include "channel/lease.hpp"
#include "channel/protocol.hpp"
#include "channel/timing.hpp"
#include "os/clock.hpp"

namespace sia::channel {

struct HubOptions {
  std::string bind;  // "tcp://0.0.0.0:7400", "ipc:///run/sia/ctl", "tcp://127.0.0.1:*"
  std::optional<KeyPair> server_key;  // CURVE; mandatory with `allow` on tcp:// (loopback too)
  std::optional<AllowList> allow;
  // The cluster's nodes: a READY for any other node is refused with an ERROR
  // "unknown_node" naming it (the agent exits, see agent.hpp). Empty: any node.
  std::set<std::string> nodes;
  std::string cluster_name;                                       // for that message
  double heartbeat_interval = kChannelTiming.heartbeat_interval;  // seconds
  int heartbeat_liveness = kChannelTiming.heartbeat_liveness;     // missed intervals: down
  // An agent's fence_after when its READY says no lease (assumed_lease, lease.hpp).
  double fence_after = kChannelTiming.fence_after;
  // Each node's lease as its agent said it before this controller started (LeaseMemory):
  // its lease until its READY (lease_before_ready).
  std::map<std::string, Lease> remembered;
  double resend_interval = 0;  // seconds between ASSIGN resends; 0: heartbeat_interval
  // Report lines handed out by poll() count as stored when poll() is next called (the
  // caller journals them in between); false: only confirm_reports() confirms.
  bool confirm_on_poll = true;
  std::int64_t first_seq = 1;  // the first ASSIGN's seq
  // The largest message a client (any peer but an agent) may send: a larger one is
  // refused unread with an ERROR "too_large" (the client exits 65). Agents' messages are
  // bounded by the transport (64 MiB, ZMQ_MAXMSGSIZE), as every message is.
  std::size_t max_request_bytes = 1 << 20;
  // Where log lines go (one line, no newline); null: the library log (core/log.hpp).
  std::function<void(const std::string&)> log;
  // The time of heartbeats, silence and fencing (not of poll()'s own wait, which is the
  // system clock's); null: the system clock. Tests pass a fake to step time by hand.
  os::Clock* clock = nullptr;
};

enum class HubEventType {
  ready,    // an agent said READY (first time, or again after a reconnect)
  up,       // a down agent was heard again (same connection)
  down,     // an agent was silent for heartbeat_interval x heartbeat_liveness, or said BYE
  fenced,   // an agent was silent for its silence limit, or said BYE having stopped its jobs
  bye,      // an agent said BYE
  ack,      // an agent acknowledged the node's current ASSIGN
  reports,  // new report lines from an agent
  refused,  // a key, a node claim or a request was refused (detail: the log line)
};
const char* to_string(HubEventType t);

struct HubEvent {
  HubEventType type = HubEventType::ready;
  std::string node;               // every event but refused
  Ready ready;                    // ready
  Ack ack;                        // ack
  Bye bye;                        // bye
  std::vector<ReportLine> lines;  // reports: lines not handed out before, in file order
  std::string detail;             // for people
};

// An agent as the hub knows it.
struct AgentView {
  std::string node;
  Identity identity;
  Inventory inventory;
  nlohmann::json run_status;  // from READY, the last ACK, BYE or HEARTBEAT that had one
  // job -> state, from the last HEARTBEAT; empty when a RunStatus came after it
  nlohmann::json jobs;
  bool busy = false;       // applying, by its last HEARTBEAT
  bool connected = false;  // has a current connection (READY seen, no BYE, not fenced)
  bool up = false;
  bool fenced = false;
  double silent_for = 0;   // seconds since it was last heard
  Lease lease;             // its own (from READY) or the one assumed
  double fence_limit = 0;  // seconds of silence after which it is fenced (silence_limit)
  std::optional<std::pair<std::int64_t, std::int64_t>> pending;  // unacknowledged ASSIGN
  std::optional<Ack> last_ack;
  Offsets confirmed;  // report offsets the controller has stored
};

// How the hub answers a LOGS request: the node whose agent reads the log, what it asks it,
// and how the agent's RunLog data becomes the document of the client's REPLY.
struct DeferredLog {
  std::string node;
  LogFetch fetch;  // its id is the hub's
  std::function<nlohmann::json(const nlohmann::json& run_log)> document;
};

class Hub {
 public:
  using RequestHandler = std::function<Reply(const Identity&, const Request&)>;
  // Plans a LOGS request, or throws sia::Error with the client's refusal.
  using LogPlanner = std::function<DeferredLog(const Identity&, const Request&)>;

  // Binds; on ipc:// only this user's and root's processes may connect
  // (restrict_ipc_peers). Status 78: a tcp:// endpoint without CURVE, a key without an
  // allow-list (or the reverse), an invalid endpoint, a libzmq that cannot check an ipc
  // peer's uid; 77: an ipc:// socket's directory that is not private (make_ipc_private
  // creates it 0700); 69: the address is in use.
  Hub(HubOptions options, RequestHandler handler);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // The bound endpoint, with the port chosen for "tcp://HOST:*".
  const std::string& endpoint() const;

  // Waits up to `timeout` for something to happen and returns it; returns at once when
  // events are ready, and after `timeout` with none.
  std::vector<HubEvent> poll(std::chrono::milliseconds timeout);

  // Sends `node` its part of `round` and returns its seq; nullopt when the node has not
  // said READY or is fenced. `placement` is a Placement document, `jobs` a Jobs document.
  std::optional<std::int64_t> assign(const std::string& node, std::int64_t round,
                                     const nlohmann::json& placement, const nlohmann::json& jobs);

  // The controller has stored `node`'s report lines of each job up to the offset given
  // (the `next` of the last line): told to the agent with the next heartbeat; lines before
  // it are not handed out again. Call it after a restart with what the journal holds.
  void confirm_reports(const std::string& node, const Offsets& stored);

  // Says BYE to every connected agent (the controller is going away).
  void say_bye(const std::string& reason);

  std::vector<AgentView> agents() const;  // by node
  std::optional<AgentView> agent(const std::string& node) const;
  std::vector<std::string> nodes_up() const;  // up and not fenced, sorted

  void set_allow_list(AllowList allow);  // for a reload; new handshakes use it

  // LOGS requests go to `planner` (not the RequestHandler) and are answered when the
  // node's agent answers, or with 69 after `timeout` seconds without its answer.
  void set_log_planner(LogPlanner planner, double timeout = 5);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sia::channel
