#include "channel/agent.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include <zmq.hpp>

#include "channel/ipc_trust.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "os/clock.hpp"

namespace sia::channel {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxMessageBytes = 64 << 20;

std::uint64_t digest(const Assign& a) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(a.placement.dump(-1, ' ', false, json::error_handler_t::replace));
  mix("\n");
  mix(a.jobs.dump(-1, ' ', false, json::error_handler_t::replace));
  return h;
}

// job -> state, from RunStatus data.
json job_summary(const json& run_status) {
  json out = json::object();
  auto it = run_status.find("jobs");
  if (it == run_status.end() || !it->is_array()) return out;
  for (const auto& j : *it) {
    if (!j.is_object()) continue;
    auto name = j.find("name");
    auto state = j.find("state");
    if (name != j.end() && name->is_string() && state != j.end() && state->is_string()) {
      out[name->get<std::string>()] = *state;
    }
  }
  return out;
}

}  // namespace

struct Agent::Impl {
  struct Key {
    std::int64_t round = 0;
    std::int64_t seq = 0;
    std::uint64_t digest = 0;
    bool operator==(const Key&) const = default;
  };
  struct Work {
    Key key;
    Assign assign;
  };

  AgentOptions opt;
  NodeBackend& node;
  zmq::context_t ctx;
  std::optional<zmq::socket_t> sock;
  std::optional<zmq::socket_t> monitor;
  int session_count = 0;
  bool synced = false;  // the controller answered READY in this session
  bool auth_logged = false;
  std::string last_waiting;           // why the last connect waited (ipc: no directory yet)
  bool in_handshake = false;          // connected, handshake not done (monitor events)
  int handshake_drops = 0;            // connections in a row that dropped during the handshake
  os::Clock::TimePoint last_heard;    // the controller, for fencing
  os::Clock::TimePoint liveness_ref;  // last heard, or when the session began
  os::Clock::TimePoint last_ready;
  os::Clock::TimePoint next_connect;
  os::Clock::TimePoint next_heartbeat;
  os::Clock::TimePoint next_scan;
  double backoff = 1;
  bool fenced = false;
  bool stop_pending = false;   // a fence stop waits for an apply to end
  bool shutting_down = false;  // no more applies
  bool stop_done = false;      // the shutdown stop ended
  Offsets sent;                // forwarded up to here in this session
  std::optional<std::pair<Key, Ack>> cached;
  std::optional<Work> current;
  std::optional<Work> queued;
  int applies = 0;
  int cache_hits = 0;
  int stale = 0;
  // The newest (round, seq) taken to apply since the start or the last fence: an older
  // ASSIGN (delayed, or repeated after a newer one) is never applied.
  std::optional<std::pair<std::int64_t, std::int64_t>> newest;
  std::pair<std::int64_t, std::int64_t> last_refused{-1, -1};
  json last_summary;  // the jobs of the last heartbeat

  Impl(AgentOptions o, NodeBackend& n) : opt(std::move(o)), node(n) {}

  void log(const std::string& line) {
    if (opt.log) {
      opt.log(line);
    } else {
      sia::log::info("agent: " + line);
    }
  }

  bool send(const Message& m) {
    if (!sock) return false;
    try {
      return sock->send(zmq::buffer(encode(m)), zmq::send_flags::dontwait).has_value();
    } catch (const zmq::error_t&) {
      return false;
    }
  }

  void send_ready(os::Clock::TimePoint now) {
    Ready r;
    r.node = opt.node;
    r.inventory = opt.inventory;
    r.run_status = node.run_status();
    r.offsets = node.report_ends();
    r.lease = agent_lease(opt.fence_after, opt.stop_grace);
    send(r);
    synced = false;
    ++session_count;
    last_ready = now;
    liveness_ref = now;
  }

  void open_session(os::Clock::TimePoint now) {
    // ipc://: only a socket that no untrusted user could have bound (status 77 otherwise).
    std::string waiting;
    const std::optional<std::string> target =
        trusted_ipc_endpoint(opt.connect, trusted_uids(opt.controller_uid), waiting);
    if (!target) {
      if (waiting != last_waiting) log("connect " + opt.connect + ": " + waiting);
      last_waiting = waiting;
      next_connect = now + os::span(backoff);
      backoff = std::min(backoff * 2, opt.backoff_max);
      return;
    }
    last_waiting.clear();
    try {
      sock.emplace(ctx, zmq::socket_type::dealer);
      sock->set(zmq::sockopt::linger, 0);
      sock->set(zmq::sockopt::maxmsgsize, kMaxMessageBytes);
      sock->set(zmq::sockopt::sndhwm, 10000);
      if (opt.keys) set_curve_client(*sock, *opt.keys);
      std::string mon = "inproc://sia-agent-monitor-" + std::to_string(session_count);
      if (zmq_socket_monitor(sock->handle(), mon.c_str(),
                             ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                                 ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0) {
        monitor.emplace(ctx, zmq::socket_type::pair);
        monitor->set(zmq::sockopt::linger, 0);
        monitor->connect(mon);
      }
      sock->connect(*target);
    } catch (const zmq::error_t& e) {
      close_socket();
      throw Error(ExitStatus::config, "connect " + opt.connect + ": " + e.what());
    }
    auth_logged = false;
    in_handshake = false;
    handshake_drops = 0;
    next_heartbeat = now + os::span(opt.heartbeat_interval);
    send_ready(now);
  }

  void close_socket() {
    if (sock) {
      zmq_socket_monitor(sock->handle(), nullptr, 0);
      sock->close();
      sock.reset();
    }
    if (monitor) {
      monitor->close();
      monitor.reset();
    }
    synced = false;
  }

  // The controller is lost: a fresh socket after the back-off.
  void lose(const std::string& why, os::Clock::TimePoint now) {
    log(why + "; connecting again in " + os::fmt_seconds(backoff));
    close_socket();
    next_connect = now + os::span(backoff);
    backoff = std::min(backoff * 2, opt.backoff_max);
  }

  void heard(os::Clock::TimePoint now) {
    last_heard = now;
    liveness_ref = now;
    backoff = opt.backoff_min;
    stop_pending = false;
    if (fenced) {
      fenced = false;
      log("the controller is back");
    }
  }

  void on_heartbeat(const Heartbeat& h, os::Clock::TimePoint now) {
    if (!synced) {
      synced = true;
      sent = h.acked;  // resume where the controller's store ends
      next_scan = now;
      log("connected to " + opt.connect + " as " + opt.node);
    } else {
      for (const auto& [job, off] : h.acked) {
        std::int64_t& s = sent[job];
        s = std::max(s, off);
      }
    }
  }

  void on_assign(Assign a) {
    if (shutting_down) return;
    Key k{a.round, a.seq, digest(a)};
    if (cached && cached->first == k) {
      ++cache_hits;
      send(cached->second);
      return;
    }
    if ((current && current->key == k) || (queued && queued->key == k)) return;
    const auto id = std::make_pair(a.round, a.seq);
    if (newest && id < *newest) {
      ++stale;
      if (id != last_refused) {  // said once, not at every resend
        log("round " + std::to_string(a.round) + " seq " + std::to_string(a.seq) +
            ": refused, older than round " + std::to_string(newest->first) + " seq " +
            std::to_string(newest->second) + " already taken (a delayed or repeated ASSIGN)");
      }
      last_refused = id;
      return;
    }
    newest = id;
    queued = Work{k, std::move(a)};
    start_next();
  }

  void start_next() {
    if (node.busy()) return;
    if (queued && !shutting_down) {
      current = std::move(queued);
      queued.reset();
      ++applies;
      node.begin_apply(current->assign.placement, current->assign.jobs);
      return;
    }
    if (stop_pending) {
      stop_pending = false;
      node.begin_stop_all("no word from the controller for " + os::fmt_seconds(opt.fence_after));
    }
  }

  void collect(os::Clock::TimePoint) {
    auto out = node.take_outcome();
    if (!out) return;
    if (out->op == NodeBackend::Op::apply && current) {
      Ack ack;
      ack.round = current->key.round;
      ack.seq = current->key.seq;
      ack.ok = out->ok;
      ack.exit_status = out->exit_status;
      ack.plan = out->plan;
      ack.run_status = node.run_status();
      ack.error = out->error;
      if (!out->ok) {
        log("round " + std::to_string(ack.round) + " seq " + std::to_string(ack.seq) +
            ": apply failed (" + std::to_string(out->exit_status) + "): " + out->error);
      }
      // A temporary failure is not remembered: a resend tries again.
      if (!fenced && out->exit_status != to_int(ExitStatus::temp_fail)) {
        cached = std::make_pair(current->key, ack);
      }
      current.reset();
      send(ack);
    } else if (out->op == NodeBackend::Op::stop) {
      if (shutting_down) stop_done = true;
      if (out->ok) {
        log("this node's jobs are checkpoint-stopped");
      } else {
        log("stopping this node's jobs failed (" + std::to_string(out->exit_status) +
            "): " + out->error);
      }
    }
    start_next();
  }

  void fence(os::Clock::TimePoint now) {
    fenced = true;
    cached.reset();
    queued.reset();
    // Its jobs stopped, the agent starts over: a controller that lost its state (its
    // rounds begin again) is heard. One that kept it never goes back in (round, seq).
    newest.reset();
    log("no word from the controller for " +
        os::fmt_seconds(std::chrono::duration<double>(now - last_heard).count()) +
        ": checkpoint-stopping this node's jobs (fencing)");
    if (node.busy()) {
      stop_pending = true;
    } else {
      node.begin_stop_all("no word from the controller for " + os::fmt_seconds(opt.fence_after));
    }
  }

  void forward_reports(os::Clock::TimePoint now) {
    Offsets next = sent;
    std::vector<ReportLine> lines = node.read_reports(sent, opt.report_batch_bytes, next);
    next_scan = now + os::span(opt.report_scan_interval);
    if (lines.empty()) {
      for (const auto& [job, off] : next) sent[job] = std::max(sent[job], off);
      return;
    }
    std::map<std::string, std::size_t> bytes;
    for (const auto& l : lines) bytes[l.job] += l.line.size() + 1;
    Report r;
    r.node = opt.node;
    r.lines = std::move(lines);
    if (!send(r)) return;  // not queued: read them again next time
    for (const auto& [job, off] : next) sent[job] = std::max(sent[job], off);
    for (const auto& [job, b] : bytes) {
      if (b * 2 >= opt.report_batch_bytes) next_scan = now;  // more is waiting
    }
  }

  // LOG_FETCH: the part of the rank's log asked for, read from the state directory.
  void on_log_fetch(const LogFetch& f) {
    LogData d;
    d.node = opt.node;
    d.id = f.id;
    try {
      d.log = node.read_log({f.job, f.rank, f.tail, f.offset, f.limit});
    } catch (const Error& e) {
      d.ok = false;
      d.status = to_int(e.status());
      d.error = e.what();
    }
    send(d);
  }

  void on_message(const zmq::message_t& frame, os::Clock::TimePoint now) {
    Message m;
    try {
      m = decode(std::string_view(static_cast<const char*>(frame.data()), frame.size()));
    } catch (const ProtocolError& e) {
      log(std::string("a message from the controller cannot be read: ") + e.what());
      return;
    }
    heard(now);
    if (auto* h = std::get_if<Heartbeat>(&m)) return on_heartbeat(*h, now);
    if (auto* a = std::get_if<Assign>(&m)) return on_assign(std::move(*a));
    if (auto* f = std::get_if<LogFetch>(&m)) return on_log_fetch(*f);
    if (auto* e = std::get_if<ErrorMessage>(&m)) {
      if (e->code == "not_ready") {
        if (now - last_ready >= os::span(opt.heartbeat_interval) || synced) {
          log("the controller does not know this agent (restarted?): saying READY again");
          newest.reset();  // what it sends from now on is its word (its rounds may restart)
          send_ready(now);
        }
        return;
      }
      if (e->code == "unknown_node") {  // only an authenticated controller's word counts
        throw Error(ExitStatus::config, "the controller refuses node " + opt.node + ": " +
                                            e->error +
                                            " (give --node a node of the controller's cluster)");
      }
      log("the controller says: " + e->code + ": " + e->error);
      return;
    }
    if (std::get_if<Bye>(&m)) {
      backoff = opt.backoff_min;
      lose("the controller said BYE", now);
      return;
    }
    log("unexpected " + type_name(m) + " from the controller; ignored");
  }

  void on_monitor_events() {
    for (int i = 0; monitor && i < 100; ++i) {
      zmq::message_t ev, addr;
      if (!monitor->recv(ev, zmq::recv_flags::dontwait)) return;
      if (ev.more()) (void)monitor->recv(addr, zmq::recv_flags::none);
      on_monitor_event(ev);
    }
  }

  void on_monitor_event(const zmq::message_t& ev) {
    if (ev.size() < 6) return;
    std::uint16_t id = 0;
    std::uint32_t value = 0;
    std::memcpy(&id, ev.data(), 2);
    std::memcpy(&value, static_cast<const char*>(ev.data()) + 2, 4);
    // A wrong server key gives no handshake event here: the controller cannot open the
    // HELLO and drops the connection silently (see client_rpc.hpp). With keys, two
    // connections in a row that drop during the handshake count as a failed one.
    switch (id) {
      case ZMQ_EVENT_CONNECTED:
        in_handshake = true;
        return;
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        in_handshake = false;
        handshake_drops = 0;
        return;
      case ZMQ_EVENT_DISCONNECTED:
        if (!in_handshake || !opt.keys || ++handshake_drops < 2) {
          in_handshake = false;
          return;
        }
        in_handshake = false;
        break;
      default:
        break;
    }
    if (auth_logged) return;
    auth_logged = true;
    if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
      log("the controller refused this agent's key (status " + std::to_string(value) +
          "): is node " + opt.node + " on its allow-list with this key?");
    } else if (opt.keys) {
      log("the CURVE handshake with " + opt.connect +
          " failed: is --server-key the controller's public key?");
    } else {
      log("the handshake with " + opt.connect +
          " failed: does the controller want CURVE keys (--server-key, --secret-key)?");
    }
  }

  void timers(os::Clock::TimePoint now) {
    if (!fenced && now - last_heard >= os::span(opt.fence_after)) fence(now);
    if (!sock) return;
    if (now - liveness_ref > os::span(opt.heartbeat_interval * opt.heartbeat_liveness)) {
      lose(synced ? "no word from the controller for " +
                        os::fmt_seconds(std::chrono::duration<double>(now - liveness_ref).count())
                  : "no answer to READY from " + opt.connect,
           now);
      return;
    }
    if (now >= next_heartbeat) {
      Heartbeat h;
      h.node = opt.node;
      json status = node.run_status();
      h.jobs = job_summary(status);
      if (h.jobs != last_summary) h.run_status = std::move(status);  // a job's state changed
      last_summary = h.jobs;
      h.busy = node.busy();
      send(h);
      next_heartbeat = now + os::span(opt.heartbeat_interval);
    }
    if (synced && now >= next_scan) forward_reports(now);
  }

  os::Clock::TimePoint next_deadline(os::Clock::TimePoint now) const {
    os::Clock::TimePoint t = last_heard + os::span(opt.fence_after);
    if (!sock) return std::min(t, next_connect);
    t = std::min(t, liveness_ref + os::span(opt.heartbeat_interval * opt.heartbeat_liveness));
    t = std::min(t, next_heartbeat);
    if (synced) t = std::min(t, next_scan);
    return std::max(t, now);
  }

  void step(std::chrono::milliseconds max_wait) {
    auto now = os::system_clock().now();
    if (!sock && now >= next_connect) open_session(now);
    collect(now);
    timers(now);
    auto until = next_deadline(os::system_clock().now()) - os::system_clock().now();
    auto wait = std::min<os::Clock::Duration>(until, max_wait);
    if (node.busy()) wait = std::min<os::Clock::Duration>(wait, std::chrono::milliseconds(50));
    auto wait_ms = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(wait).count() + 1);
    if (!sock) {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      return;
    }
    zmq::pollitem_t items[2] = {{sock->handle(), 0, ZMQ_POLLIN, 0},
                                {monitor ? monitor->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, monitor ? 2 : 1, std::chrono::milliseconds(wait_ms));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) return;
      throw Error(ExitStatus::io, std::string("poll: ") + e.what());
    }
    if (monitor && (items[1].revents & ZMQ_POLLIN)) on_monitor_events();
    now = os::system_clock().now();
    for (int i = 0; sock && i < 1000; ++i) {
      zmq::message_t frame;
      if (!sock->recv(frame, zmq::recv_flags::dontwait)) break;
      while (frame.more()) {  // keep the last frame of a multipart message
        zmq::message_t next;
        if (!sock->recv(next, zmq::recv_flags::none)) break;
        frame = std::move(next);
      }
      on_message(frame, now);
    }
    collect(now);
  }
};

Agent::Agent(AgentOptions options, NodeBackend& node)
    : impl_(std::make_unique<Impl>(std::move(options), node)) {
  const AgentOptions& o = impl_->opt;
  if (!valid_peer_name(o.node)) {
    throw Error(ExitStatus::config, "node name \"" + o.node +
                                        "\": expected letters, digits, '.', '_' or '-' "
                                        "(give --node)");
  }
  if (!(o.heartbeat_interval > 0) || o.heartbeat_liveness < 1 || !(o.fence_after > 0) ||
      !(o.stop_grace >= 0) || !(o.backoff_min > 0) || o.backoff_max < o.backoff_min) {
    throw Error(ExitStatus::config,
                "heartbeat interval, fence time and back-off must be positive, the grace "
                "period not negative, liveness at least 1");
  }
  if (o.connect.empty()) throw Error(ExitStatus::usage, "no controller endpoint (--connect)");
  require_curve(o.connect, o.keys.has_value(), "connect",
                "give --server-key and --secret-key, or connect over ipc://");
  refuse_abstract_ipc(o.connect);
  auto now = os::system_clock().now();
  impl_->last_heard = now;
  impl_->liveness_ref = now;
  impl_->next_connect = now;
  impl_->backoff = o.backoff_min;
}

Agent::~Agent() {
  if (impl_) impl_->close_socket();
}

void Agent::step(std::chrono::milliseconds max_wait) {
  impl_->step(max_wait);
}

int Agent::run(const std::atomic<int>& stop, bool keep_jobs) {
  Impl& d = *impl_;
  while (stop.load() == 0) d.step(std::chrono::milliseconds(250));
  bool stopped = false;
  if (!keep_jobs && stop.load() == 1) {
    d.shutting_down = true;
    d.queued.reset();
    d.stop_pending = false;
    d.log("stopping: checkpoint-stopping this node's jobs first (signal again to leave now)");
    bool begun = false;
    while (stop.load() == 1 && !d.stop_done) {
      if (!begun && !d.node.busy()) {
        d.node.begin_stop_all("sia-run agent is stopping");
        begun = true;
      }
      d.step(std::chrono::milliseconds(100));
    }
    stopped = d.stop_done;
  } else {
    d.shutting_down = true;
  }
  say_bye("the agent is stopping", stopped);
  return 0;
}

void Agent::say_bye(const std::string& reason, bool stopped_jobs) {
  Impl& d = *impl_;
  if (!d.sock) return;
  Bye b;
  b.node = d.opt.node;
  b.reason = reason;
  b.stopped = stopped_jobs;
  b.run_status = d.node.run_status();
  try {
    d.sock->set(zmq::sockopt::linger, 1000);
  } catch (const zmq::error_t&) {
  }
  d.send(b);
  d.close_socket();
}

bool Agent::connected() const {
  return impl_->sock && impl_->synced;
}
bool Agent::fenced() const {
  return impl_->fenced;
}
int Agent::sessions() const {
  return impl_->session_count;
}
int Agent::applies() const {
  return impl_->applies;
}
int Agent::acks_from_cache() const {
  return impl_->cache_hits;
}

int Agent::stale_refused() const {
  return impl_->stale;
}

}  // namespace sia::channel
