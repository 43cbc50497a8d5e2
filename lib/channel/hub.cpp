#include "channel/hub.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>

#include <zmq.hpp>

#include "channel/hub_leases.hpp"
#include "channel/security.hpp"
#include "channel/zap_handler.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "os/clock.hpp"

namespace sia::channel {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxMessageBytes = 64 << 20;
constexpr int kMaxDrainPerPass = 10000;

std::string short_text(std::string s) {
  if (s.size() > 200) s = s.substr(0, 197) + "...";
  return s;
}

}  // namespace

const char* to_string(HubEventType t) {
  switch (t) {
    case HubEventType::ready:
      return "ready";
    case HubEventType::up:
      return "up";
    case HubEventType::down:
      return "down";
    case HubEventType::fenced:
      return "fenced";
    case HubEventType::bye:
      return "bye";
    case HubEventType::ack:
      return "ack";
    case HubEventType::reports:
      return "reports";
    case HubEventType::refused:
      return "refused";
  }
  return "?";
}

struct Hub::Impl {
  struct Pending {
    std::int64_t round = 0;
    std::int64_t seq = 0;
    std::string frame;
    os::Clock::TimePoint last_sent;
  };
  struct Agent {
    std::string node;
    Identity identity;
    Inventory inventory;
    json run_status = json::object();
    json jobs = json::object();  // the last HEARTBEAT's, unless run_status is newer
    bool busy = false;
    std::string rid;  // the current connection's routing id; "" when none
    bool up = false;
    bool fenced = false;
    os::Clock::TimePoint last_heard;
    os::Clock::TimePoint last_heartbeat;
    std::optional<Pending> pending;
    std::optional<Ack> last_ack;
    Offsets confirmed;  // stored by the controller
    Offsets handed;     // handed out by poll(): lines before these offsets are not again
    NodeLease fencing;  // its lease and when silence fences it (hub_leases.hpp)
  };

  HubOptions opt;
  RequestHandler handler;
  zmq::context_t ctx;
  std::unique_ptr<ZapHandler> zap;
  zmq::socket_t router;
  std::string endpoint;
  bool curve = false;
  std::map<std::string, Agent> agents;
  std::map<std::string, std::string> rid_node;  // routing id -> node of its READY
  std::int64_t next_seq = 1;
  std::vector<HubEvent> events;
  HubLeases leases;
  os::Clock::Duration interval{};
  os::Clock::Duration resend{};
  // LOGS requests waiting for an agent's LOG, by LOG_FETCH id.
  struct LogWait {
    std::string client_rid;
    std::string request_id;
    std::string node;
    os::Clock::TimePoint deadline;
    std::function<json(const json&)> document;
  };
  LogPlanner log_planner;
  os::Clock::Duration log_timeout{};
  std::map<std::string, LogWait> log_waits;
  std::int64_t next_fetch = 1;

  os::Clock& clock() const { return opt.clock ? *opt.clock : os::system_clock(); }

  // A RunStatus newer than the last HEARTBEAT (READY, ACK, BYE): that heartbeat's job
  // states are older and must not be laid over it -- a job that had failed, started again
  // by the ACK's apply, would read as failed until the next heartbeat, and a job moving
  // off the node would start elsewhere while it still runs here.
  static void take_status(Agent& a, json run_status) {
    a.run_status = std::move(run_status);
    a.jobs = json::object();
  }

  void log(const std::string& line) {
    if (opt.log) {
      opt.log(line);
    } else {
      sia::log::info(line);
    }
  }

  void send(const std::string& rid, const std::string& frame) {
    try {
      if (!router.send(zmq::buffer(rid), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return;
      }
      (void)router.send(zmq::buffer(frame), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // The peer is gone or its queue is full: the message is dropped, as a lost one.
    }
  }
  void send(const std::string& rid, const Message& m) { send(rid, encode(m)); }

  void send_error(const std::string& rid, const std::string& code, const std::string& text) {
    send(rid, ErrorMessage{code, text});
  }

  void refuse(const std::string& rid, const std::string& line,
              const std::string& code = "refused") {
    log("refused: " + line);
    HubEvent e;
    e.type = HubEventType::refused;
    e.detail = line;
    events.push_back(std::move(e));
    send_error(rid, code, line);
  }

  void emit(HubEventType type, const Agent& a, std::string detail) {
    HubEvent e;
    e.type = type;
    e.node = a.node;
    e.detail = std::move(detail);
    events.push_back(std::move(e));
  }

  void send_heartbeat(Agent& a, os::Clock::TimePoint now) {
    Heartbeat h;
    h.acked = a.confirmed;
    send(a.rid, h);
    a.last_heartbeat = now;
  }

  void unbind(Agent& a) {
    if (!a.rid.empty()) rid_node.erase(a.rid);
    a.rid.clear();
  }

  std::string who(const std::string& rid, const std::optional<Identity>& auth) const {
    if (auth) return auth->describe();
    auto it = rid_node.find(rid);
    return it != rid_node.end() ? "agent:" + it->second + " (unauthenticated)"
                                : "an unauthenticated peer";
  }

  // The agent that may send `type` on connection `rid`, or null (answered already).
  Agent* agent_for(const std::string& rid, const std::optional<Identity>& auth,
                   const std::string& claimed, const std::string& type) {
    std::string node;
    if (auth) {
      if (!auth->is_agent()) {
        refuse(rid, auth->describe() + " sent " + type + ", which only agents may send");
        return nullptr;
      }
      node = auth->name;
    } else {
      auto it = rid_node.find(rid);
      if (it == rid_node.end()) {
        send_error(rid, "not_ready", type + " before READY: say READY first");
        return nullptr;
      }
      node = it->second;
    }
    if (!claimed.empty() && claimed != node) {
      refuse(rid, who(rid, auth) + " sent " + type + " claiming node \"" + claimed +
                      "\": a node may only speak for itself");
      return nullptr;
    }
    auto a = agents.find(node);
    if (a == agents.end() || a->second.rid != rid) {
      send_error(rid, "not_ready", type + " on a connection without READY: say READY first");
      return nullptr;
    }
    return &a->second;
  }

  void heard(Agent& a, os::Clock::TimePoint now) {
    a.last_heard = now;
    if (!a.up) {
      a.up = true;
      emit(HubEventType::up, a, a.node + " is heard again");
    }
  }

  void on_ready(const std::string& rid, const std::optional<Identity>& auth, Ready r,
                os::Clock::TimePoint now) {
    if (auth) {
      if (!auth->is_agent()) {
        refuse(rid, auth->describe() + " sent READY for node \"" + r.node +
                        "\", which only agent keys may");
        return;
      }
      if (auth->name != r.node) {
        refuse(rid, auth->describe() + " sent READY claiming node \"" + r.node +
                        "\": a node may only speak for itself");
        return;
      }
    } else if (auto it = rid_node.find(rid); it != rid_node.end() && it->second != r.node) {
      refuse(rid, "agent:" + it->second + " (unauthenticated) sent READY claiming node \"" +
                      r.node + "\" on the same connection");
      return;
    }
    if (!opt.nodes.empty() && !opt.nodes.count(r.node)) {
      refuse(rid,
             "node \"" + r.node + "\" is not in cluster " +
                 (opt.cluster_name.empty() ? "" : opt.cluster_name + " ") + "(READY from " +
                 who(rid, auth) + "); not accepted",
             "unknown_node");
      return;
    }
    Agent& a = agents[r.node];
    bool known = !a.node.empty();
    if (!a.rid.empty() && a.rid != rid) {
      if (a.up) log("node " + r.node + ": a new connection replaces a live one (two agents?)");
      unbind(a);
    }
    a.node = r.node;
    a.rid = rid;
    rid_node[rid] = r.node;
    if (auth) {
      a.identity = *auth;
    } else {
      a.identity = Identity{Identity::Kind::agent, r.node, "", false};
    }
    a.inventory = r.inventory;
    leases.take_ready(a.fencing, r.node, r.lease);
    take_status(a, r.run_status);
    a.busy = false;
    a.last_heard = now;
    a.up = true;
    a.fenced = false;
    HubEvent e;
    e.type = HubEventType::ready;
    e.node = r.node;
    e.detail = r.node + (known ? " reconnected" : " connected") + " as " + a.identity.describe();
    e.ready = std::move(r);
    events.push_back(std::move(e));
    send_heartbeat(a, now);
    if (a.pending) {
      send(a.rid, a.pending->frame);
      a.pending->last_sent = now;
    }
  }

  void on_ack(Agent& a, Ack ack) {
    if (!a.pending || a.pending->round != ack.round || a.pending->seq != ack.seq) {
      return;  // an older ASSIGN's, or a repeat: the current one is what counts
    }
    a.pending.reset();
    if (!ack.run_status.is_null()) take_status(a, ack.run_status);
    a.last_ack = ack;
    HubEvent e;
    e.type = HubEventType::ack;
    e.node = a.node;
    e.detail = a.node + " acknowledged round " + std::to_string(ack.round) + " seq " +
               std::to_string(ack.seq) + (ack.ok ? "" : ": failed: " + ack.error);
    e.ack = std::move(ack);
    events.push_back(std::move(e));
  }

  void on_report(Agent& a, Report r) {
    HubEvent e;
    e.type = HubEventType::reports;
    e.node = a.node;
    for (auto& line : r.lines) {
      std::int64_t& next = a.handed[line.job];
      if (line.offset < next) continue;  // handed out already
      next = line.offset + static_cast<std::int64_t>(line.line.size()) + 1;
      e.lines.push_back(std::move(line));
    }
    if (e.lines.empty()) return;
    e.detail = std::to_string(e.lines.size()) + " report lines from " + a.node;
    events.push_back(std::move(e));
  }

  void on_bye(Agent& a, Bye b, os::Clock::TimePoint now) {
    a.last_heard = now;
    if (!b.run_status.is_null()) take_status(a, b.run_status);
    unbind(a);
    HubEvent e;
    e.type = HubEventType::bye;
    e.node = a.node;
    e.detail = a.node + " said BYE" + (b.reason.empty() ? "" : " (" + b.reason + ")") +
               (b.stopped ? ", its jobs stopped" : "");
    bool stopped = b.stopped;
    e.bye = std::move(b);
    events.push_back(std::move(e));
    if (a.up) {
      a.up = false;
      emit(HubEventType::down, a, a.node + " is down (BYE)");
    }
    if (stopped && !a.fenced) fence(a, a.node + " stopped its jobs and left");
  }

  void fence(Agent& a, const std::string& why) {
    a.fenced = true;
    a.up = false;
    a.pending.reset();
    unbind(a);
    emit(HubEventType::fenced, a, why);
  }

  void on_request(const std::string& rid, const std::optional<Identity>& auth, Request r) {
    Identity id;
    if (auth) {
      id = *auth;
    } else {
      id.kind = Identity::Kind::client;
      id.name = r.client.empty() ? "anonymous" : r.client;
    }
    Reply reply;
    bool from_agent = id.is_agent() || (!auth && rid_node.count(rid));
    if (from_agent) {
      std::string line =
          who(rid, auth) + " sent " + to_string(r.kind) + ": requests from agent keys are refused";
      log("refused: " + line);
      HubEvent e;
      e.type = HubEventType::refused;
      e.detail = line;
      events.push_back(std::move(e));
      reply.ok = false;
      reply.status = to_int(ExitStatus::no_perm);
      reply.error = "requests from agent keys are refused";
    } else if (r.kind == RequestKind::logs && log_planner) {
      if (start_log_fetch(rid, id, r, reply)) return;  // answered when the agent is
    } else if (!handler) {
      reply.ok = false;
      reply.status = to_int(ExitStatus::unavailable);
      reply.error = "this controller takes no requests";
    } else {
      try {
        reply = handler(id, r);
      } catch (const Error& e) {
        reply = Reply{};
        reply.ok = false;
        reply.status = to_int(e.status());
        reply.error = e.what();
      } catch (const std::exception& e) {
        reply = Reply{};
        reply.ok = false;
        reply.status = to_int(ExitStatus::software);
        reply.error = std::string("internal error: ") + e.what();
        log("internal error answering " + std::string(to_string(r.kind)) + ": " + e.what());
      }
    }
    reply.id = r.id;
    if (!reply.ok && reply.status == 0) reply.status = to_int(ExitStatus::software);
    send(rid, reply);
  }

  // Sends the LOG_FETCH of a LOGS request; false with `reply` set when it is answered now.
  bool start_log_fetch(const std::string& rid, const Identity& id, const Request& r, Reply& reply) {
    DeferredLog plan;
    try {
      plan = log_planner(id, r);
    } catch (const Error& e) {
      reply.ok = false;
      reply.status = to_int(e.status());
      reply.error = e.what();
      return false;
    }
    auto a = agents.find(plan.node);
    if (a == agents.end() || a->second.rid.empty() || !a->second.up || a->second.fenced) {
      reply.ok = false;
      reply.status = to_int(ExitStatus::unavailable);
      reply.error = "node " + plan.node + " is down (its agent is not connected): cannot read " +
                    "the log of job \"" + plan.fetch.job + "\"";
      return false;
    }
    plan.fetch.id = std::to_string(next_fetch++);
    send(a->second.rid, plan.fetch);
    log_waits[plan.fetch.id] = {rid, r.id, plan.node, clock().now() + log_timeout,
                                std::move(plan.document)};
    return true;
  }

  void on_log(Agent& a, LogData d) {
    auto w = log_waits.find(d.id);
    if (w == log_waits.end() || w->second.node != a.node) return;  // timed out already
    Reply reply;
    reply.id = w->second.request_id;
    if (d.ok) {
      try {
        reply.document = w->second.document(d.log);
      } catch (const std::exception& e) {
        reply.ok = false;
        reply.status = to_int(ExitStatus::software);
        reply.error = "node " + a.node + ": a log answer that does not read: " + e.what();
      }
    } else {
      reply.ok = false;
      reply.status = d.status != 0 ? d.status : to_int(ExitStatus::software);
      reply.error = "node " + a.node + ": " + d.error;
    }
    send(w->second.client_rid, reply);
    log_waits.erase(w);
  }

  void log_timers(os::Clock::TimePoint now) {
    for (auto w = log_waits.begin(); w != log_waits.end();) {
      if (now < w->second.deadline) {
        ++w;
        continue;
      }
      Reply reply;
      reply.id = w->second.request_id;
      reply.ok = false;
      reply.status = to_int(ExitStatus::unavailable);
      reply.error = "node " + w->second.node + " did not answer within " +
                    os::fmt_seconds(os::to_seconds(log_timeout)) + ": cannot read the log";
      send(w->second.client_rid, reply);
      w = log_waits.erase(w);
    }
  }

  // A client's message over max_request_bytes is refused before it is read: building it
  // would cost many times its size, and a job it holds would be copied into the journal,
  // the rounds and the nodes. An agent's messages are bounded by the transport only; an
  // unauthenticated (ipc://) peer's READY is an agent's.
  bool oversized(const std::string& rid, const std::optional<Identity>& auth,
                 std::string_view payload) {
    if (payload.size() <= opt.max_request_bytes) return false;
    if (auth ? auth->is_agent() : (rid_node.count(rid) > 0 || says_ready(payload))) {
      return false;
    }
    refuse(rid,
           who(rid, auth) + " sent a message of " + std::to_string(payload.size()) +
               " bytes, over the limit of " + std::to_string(opt.max_request_bytes) +
               " for a request (controller.max_request_bytes)",
           "too_large");
    return true;
  }

  void on_message(const std::string& rid, const std::optional<Identity>& auth,
                  std::string_view payload, os::Clock::TimePoint now) {
    if (oversized(rid, auth, payload)) return;
    Message m;
    try {
      m = decode(payload);
    } catch (const VersionError& e) {
      log(who(rid, auth) + ": " + e.what());
      send_error(rid, "version", e.what());
      return;
    } catch (const ProtocolError& e) {
      log(who(rid, auth) + ": bad message: " + short_text(e.what()));
      send_error(rid, "malformed", e.what());
      return;
    }
    if (auto* r = std::get_if<Ready>(&m)) return on_ready(rid, auth, std::move(*r), now);
    if (auto* r = std::get_if<Request>(&m)) return on_request(rid, auth, std::move(*r));
    if (auto* x = std::get_if<Ack>(&m)) {
      if (Agent* a = agent_for(rid, auth, "", "ACK")) {
        heard(*a, now);
        on_ack(*a, std::move(*x));
      }
      return;
    }
    if (auto* x = std::get_if<Report>(&m)) {
      if (Agent* a = agent_for(rid, auth, x->node, "REPORT")) {
        heard(*a, now);
        on_report(*a, std::move(*x));
      }
      return;
    }
    if (auto* x = std::get_if<Heartbeat>(&m)) {
      if (Agent* a = agent_for(rid, auth, x->node, "HEARTBEAT")) {
        heard(*a, now);
        a->jobs = x->jobs;
        a->busy = x->busy;
        if (x->run_status.is_object()) a->run_status = x->run_status;
      }
      return;
    }
    if (auto* x = std::get_if<Bye>(&m)) {
      if (Agent* a = agent_for(rid, auth, x->node, "BYE")) on_bye(*a, std::move(*x), now);
      return;
    }
    if (auto* x = std::get_if<LogData>(&m)) {
      if (Agent* a = agent_for(rid, auth, x->node, "LOG")) {
        heard(*a, now);
        on_log(*a, std::move(*x));
      }
      return;
    }
    if (auto* x = std::get_if<ErrorMessage>(&m)) {
      log(who(rid, auth) + " reports an error: " + x->code + ": " + short_text(x->error));
      return;
    }
    send_error(rid, "malformed", type_name(m) + " is not a message for the controller");
  }

  // Reads what is queued without blocking; true when anything was read.
  bool drain(os::Clock::TimePoint now) {
    bool any = false;
    for (int i = 0; i < kMaxDrainPerPass; ++i) {
      zmq::message_t rid;
      if (!router.recv(rid, zmq::recv_flags::dontwait)) break;
      any = true;
      std::vector<zmq::message_t> body;
      while (rid.more() || (!body.empty() && body.back().more())) {
        zmq::message_t part;
        if (!router.recv(part, zmq::recv_flags::none)) break;
        body.push_back(std::move(part));
        if (!body.back().more()) break;
      }
      // [rid] payload, or [rid] "" payload (a REQ-style delimiter).
      if (!body.empty() && body.front().size() == 0 && body.size() == 2) body.erase(body.begin());
      std::string rid_s = rid.to_string();
      if (body.size() != 1) {
        send_error(rid_s, "malformed", "expected one frame per message");
        continue;
      }
      std::optional<Identity> auth;
      if (curve) {
        const char* user = zmq_msg_gets(body[0].handle(), "User-Id");
        auth = user ? parse_user_id(user) : std::nullopt;
        if (!auth) {  // cannot happen with our ZAP handler; refuse rather than guess
          refuse(rid_s, "a CURVE peer without a known User-Id");
          continue;
        }
        if (const char* key = zmq_msg_gets(body[0].handle(), kKeyProperty)) auth->key = key;
        const char* admin = zmq_msg_gets(body[0].handle(), kAdminProperty);
        auth->admin = admin && std::string_view(admin) == "1";
        if (const char* user = zmq_msg_gets(body[0].handle(), kAccountProperty)) {
          auth->account = user;
        }
        auth->authenticated = true;
      }
      on_message(rid_s, auth,
                 std::string_view(static_cast<const char*>(body[0].data()), body[0].size()), now);
    }
    return any;
  }

  void take_refusals() {
    if (!zap) return;
    for (auto& line : zap->take_refusals()) {
      log(line);
      HubEvent e;
      e.type = HubEventType::refused;
      e.detail = std::move(line);
      events.push_back(std::move(e));
    }
  }

  void timers(os::Clock::TimePoint now) {
    log_timers(now);
    for (auto& [node, a] : agents) {
      auto silent = now - a.last_heard;
      if (a.up && leases.down(silent)) {
        a.up = false;
        emit(HubEventType::down, a,
             node + " is down: silent for " + os::fmt_seconds(os::to_seconds(silent)));
      }
      // An agent that is down hears nothing more from the hub: by its lease's silence
      // limit it has checkpoint-stopped its jobs and they have ended (lease.hpp).
      if (!a.fenced && !a.up && HubLeases::fenced(a.fencing, silent)) {
        fence(a, node + " is fenced: silent for " + os::fmt_seconds(os::to_seconds(silent)) +
                     "; its jobs count as stopped");
        continue;
      }
      if (a.rid.empty() || !a.up) continue;
      if (now - a.last_heartbeat >= interval) send_heartbeat(a, now);
      if (a.pending && now - a.pending->last_sent >= resend) {
        send(a.rid, a.pending->frame);
        a.pending->last_sent = now;
      }
    }
  }
};

Hub::Hub(HubOptions options, RequestHandler handler) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.opt = std::move(options);
  d.handler = std::move(handler);
  const HubOptions& o = d.opt;
  if (!(o.heartbeat_interval > 0) || o.heartbeat_liveness < 1 || !(o.fence_after > 0) ||
      o.resend_interval < 0) {
    throw Error(ExitStatus::config,
                "heartbeat_interval and fence_after must be positive, heartbeat_liveness at "
                "least 1");
  }
  if (o.server_key.has_value() != o.allow.has_value()) {
    throw Error(ExitStatus::config,
                o.server_key ? "a CURVE secret key without an allow-list would accept any "
                               "client that knows the server key; set [controller] allow"
                             : "an allow-list needs CURVE: set [controller] secret_key");
  }
  require_curve(o.bind, o.server_key.has_value(), "bind",
                "set [controller] secret_key and allow, or bind to ipc://");
  make_ipc_private(o.bind);
  d.curve = o.server_key.has_value();
  d.interval = os::span(o.heartbeat_interval);
  d.leases = HubLeases(o, [&d](const std::string& line) { d.log(line); });
  d.resend = os::span(o.resend_interval > 0 ? o.resend_interval : o.heartbeat_interval);
  d.next_seq = std::max<std::int64_t>(1, o.first_seq);
  try {
    if (d.curve) d.zap = std::make_unique<ZapHandler>(d.ctx, *o.allow);
    d.router = zmq::socket_t(d.ctx, zmq::socket_type::router);
    d.router.set(zmq::sockopt::linger, 0);
    d.router.set(zmq::sockopt::maxmsgsize, kMaxMessageBytes);
    d.router.set(zmq::sockopt::rcvhwm, 100000);
    d.router.set(zmq::sockopt::sndhwm, 100000);
    if (d.curve) set_curve_server(d.router, *o.server_key);
    restrict_ipc_peers(d.router, o.bind);
    d.router.bind(o.bind);
    d.endpoint = d.router.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    ExitStatus s = e.num() == EADDRINUSE ? ExitStatus::unavailable : ExitStatus::config;
    throw Error(s, "bind " + o.bind + ": " + e.what());
  }
}

Hub::~Hub() {
  if (!impl_) return;
  impl_->router.close();
  impl_->zap.reset();
}

const std::string& Hub::endpoint() const {
  return impl_->endpoint;
}

std::vector<HubEvent> Hub::poll(std::chrono::milliseconds timeout) {
  Impl& d = *impl_;
  if (d.opt.confirm_on_poll) {
    for (auto& [node, a] : d.agents) {
      for (const auto& [job, off] : a.handed) {
        std::int64_t& c = a.confirmed[job];
        c = std::max(c, off);
      }
    }
  }
  // The wait is on the system clock; heartbeats, silence and fencing on clock().
  const auto start = os::system_clock().now();
  const auto deadline = start + timeout;
  const auto tick = std::clamp<os::Clock::Duration>(d.interval / 4, std::chrono::milliseconds(2),
                                                    std::chrono::milliseconds(250));
  for (bool first = true;; first = false) {
    d.drain(d.clock().now());
    d.take_refusals();
    d.timers(d.clock().now());
    if (!d.events.empty()) break;
    auto now = os::system_clock().now();
    if (now >= deadline && !first) break;
    auto wait = std::min<os::Clock::Duration>(deadline - now, tick);
    if (wait <= os::Clock::Duration::zero()) {
      if (!first) break;
      continue;
    }
    zmq::pollitem_t item{d.router.handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1,
                std::chrono::duration_cast<std::chrono::milliseconds>(wait) +
                    std::chrono::milliseconds(1));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw Error(ExitStatus::io, std::string("poll: ") + e.what());
      break;  // a signal: let the caller look at it
    }
  }
  std::vector<HubEvent> out;
  out.swap(d.events);
  return out;
}

std::optional<std::int64_t> Hub::assign(const std::string& node, std::int64_t round,
                                        const json& placement, const json& jobs) {
  Impl& d = *impl_;
  auto it = d.agents.find(node);
  if (it == d.agents.end() || it->second.fenced) return std::nullopt;
  Impl::Agent& a = it->second;
  Assign m;
  m.round = round;
  m.seq = d.next_seq++;
  m.placement = placement;
  m.jobs = jobs;
  Impl::Pending p;
  p.round = round;
  p.seq = m.seq;
  p.frame = encode(m);
  p.last_sent = d.clock().now();
  if (!a.rid.empty()) d.send(a.rid, p.frame);
  a.pending = std::move(p);
  return m.seq;
}

void Hub::confirm_reports(const std::string& node, const Offsets& stored) {
  Impl::Agent& a = impl_->agents[node];
  if (a.node.empty()) {
    a.node = node;
    a.identity = Identity{Identity::Kind::agent, node, "", false};
    a.fenced = true;  // known from the journal only: not connected, nothing to fence
    a.last_heard = impl_->clock().now();
    impl_->leases.take_before_ready(a.fencing, node);
  }
  for (const auto& [job, off] : stored) {
    std::int64_t& c = a.confirmed[job];
    c = std::max(c, off);
    std::int64_t& h = a.handed[job];
    h = std::max(h, off);
  }
}

void Hub::say_bye(const std::string& reason) {
  for (auto& [node, a] : impl_->agents) {
    if (!a.rid.empty()) impl_->send(a.rid, Bye{"", reason, false, nullptr});
  }
}

std::vector<AgentView> Hub::agents() const {
  std::vector<AgentView> out;
  for (const auto& [node, a] : impl_->agents) {
    if (auto v = agent(node)) out.push_back(std::move(*v));
  }
  return out;
}

std::optional<AgentView> Hub::agent(const std::string& node) const {
  auto it = impl_->agents.find(node);
  if (it == impl_->agents.end()) return std::nullopt;
  const Impl::Agent& a = it->second;
  AgentView v;
  v.node = a.node;
  v.identity = a.identity;
  v.inventory = a.inventory;
  v.run_status = a.run_status;
  v.jobs = a.jobs;
  v.busy = a.busy;
  v.connected = !a.rid.empty();
  v.up = a.up;
  v.fenced = a.fenced;
  v.silent_for = os::to_seconds(impl_->clock().now() - a.last_heard);
  v.lease = a.fencing.lease;
  v.fence_limit = os::to_seconds(a.fencing.limit);
  if (a.pending) v.pending = std::make_pair(a.pending->round, a.pending->seq);
  v.last_ack = a.last_ack;
  v.confirmed = a.confirmed;
  return v;
}

std::vector<std::string> Hub::nodes_up() const {
  std::vector<std::string> out;
  for (const auto& [node, a] : impl_->agents) {
    if (a.up && !a.fenced && !a.rid.empty()) out.push_back(node);
  }
  return out;
}

void Hub::set_log_planner(LogPlanner planner, double timeout) {
  impl_->log_planner = std::move(planner);
  impl_->log_timeout = os::span(timeout);
}

void Hub::set_allow_list(AllowList allow) {
  if (impl_->zap) impl_->zap->set_allow_list(std::move(allow));
}

}  // namespace sia::channel
