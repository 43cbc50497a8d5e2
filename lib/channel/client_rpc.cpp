#include "channel/client_rpc.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <zmq.hpp>

#include "core/error.hpp"
#include "os/clock.hpp"

namespace sia::channel {

namespace {

std::string make_id() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

std::string default_client() {
  const char* u = std::getenv("USER");
  if (u && valid_peer_name(u)) return u;
  return "anonymous";
}

std::string fmt_timeout(double s) {  // "10 s", as configured
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

enum class HandshakeVerdict { pending, key_refused, failed };

// Reads the client socket's monitor events. The controller's ZAP handler refusing the key
// shows as HANDSHAKE_FAILED_AUTH (the server sends an ERROR command). A wrong server key
// shows nothing of the kind: the controller cannot open the client's HELLO, so it closes
// the connection without a word, and the client only sees a connection that drops before
// its handshake succeeded (and then reconnects). Nothing answering at all never connects.
// So, with CURVE keys: a HANDSHAKE_FAILED_* event, or a second connection in a row that
// drops during the handshake, is a failed handshake; a refused key wins when it comes.
class HandshakeWatch {
 public:
  HandshakeVerdict on_event(std::uint16_t id, bool curve) {
    switch (id) {
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        return HandshakeVerdict::key_refused;
      case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
      case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        // Without keys this is a CURVE server refusing the NULL mechanism: nothing here
        // could have answered this client; it times out (69) as before.
        return curve ? HandshakeVerdict::failed : HandshakeVerdict::pending;
      case ZMQ_EVENT_CONNECTED:
        in_handshake_ = true;
        return HandshakeVerdict::pending;
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        in_handshake_ = false;
        drops_ = 0;
        return HandshakeVerdict::pending;
      case ZMQ_EVENT_DISCONNECTED:
        if (in_handshake_ && curve && ++drops_ >= 2) return HandshakeVerdict::failed;
        in_handshake_ = false;
        return HandshakeVerdict::pending;
      default:
        return HandshakeVerdict::pending;
    }
  }

 private:
  bool in_handshake_ = false;
  int drops_ = 0;
};

}  // namespace

Reply call(const ClientOptions& o, Request request) {
  require_curve(o.endpoint, o.keys.has_value(), "connect",
                "an unauthenticated client is refused: give --server-key and --secret-key "
                "([client] server_key and secret_key), or run with the controller's state "
                "directory, whose keys/server.pub and keys/admin.key are then used",
                ExitStatus::no_perm);
  if (!(o.timeout > 0)) throw Error(ExitStatus::usage, "the timeout must be positive");
  if (request.id.empty()) request.id = make_id();
  if (request.client.empty() && !o.keys)
    request.client = o.client.empty() ? default_client() : o.client;

  const std::string payload = encode(request);
  if (o.max_request_bytes > 0 && payload.size() > o.max_request_bytes) {
    throw Error(ExitStatus::data,
                "the " + std::string(to_string(request.kind)) + " request is " +
                    std::to_string(payload.size()) + " bytes, over the limit of " +
                    std::to_string(o.max_request_bytes) + " (controller.max_request_bytes)");
  }

  static std::atomic<int> counter{0};
  zmq::context_t ctx;
  zmq::socket_t sock(ctx, zmq::socket_type::dealer);
  zmq::socket_t monitor(ctx, zmq::socket_type::pair);
  try {
    sock.set(zmq::sockopt::linger, 0);
    sock.set(zmq::sockopt::maxmsgsize, std::int64_t{64} << 20);
    if (o.keys) set_curve_client(sock, *o.keys);
    std::string mon = "inproc://sia-client-monitor-" + std::to_string(counter++);
    if (zmq_socket_monitor(sock.handle(), mon.c_str(),
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
      throw zmq::error_t();
    }
    monitor.set(zmq::sockopt::linger, 0);
    monitor.connect(mon);
    sock.connect(o.endpoint);
    (void)sock.send(zmq::buffer(payload), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    throw Error(ExitStatus::config, "connect " + o.endpoint + ": " + e.what());
  }

  HandshakeWatch handshake;
  const auto deadline = os::system_clock().now() + os::span(o.timeout);
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - os::system_clock().now());
    if (left.count() <= 0) break;
    zmq::pollitem_t items[] = {{sock.handle(), 0, ZMQ_POLLIN, 0},
                               {monitor.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, left);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) throw Error(ExitStatus::temp_fail, "interrupted");
      throw Error(ExitStatus::io, std::string("poll: ") + e.what());
    }
    while (items[1].revents & ZMQ_POLLIN) {
      zmq::message_t ev, addr;
      if (!monitor.recv(ev, zmq::recv_flags::dontwait)) break;
      if (ev.more()) (void)monitor.recv(addr, zmq::recv_flags::none);
      if (ev.size() < 6) continue;
      std::uint16_t id = 0;
      std::memcpy(&id, ev.data(), 2);
      HandshakeVerdict v = handshake.on_event(id, o.keys.has_value());
      if (v == HandshakeVerdict::key_refused) {
        zmq_socket_monitor(sock.handle(), nullptr, 0);
        throw Error(ExitStatus::no_perm,
                    o.endpoint +
                        " refused this client's key (is it on the controller's "
                        "allow-list?)");
      }
      if (v == HandshakeVerdict::failed) {
        zmq_socket_monitor(sock.handle(), nullptr, 0);
        throw Error(ExitStatus::no_perm, "the CURVE handshake with " + o.endpoint +
                                             " failed (is the server key the controller's?)");
      }
    }
    if (!(items[0].revents & ZMQ_POLLIN)) continue;
    zmq::message_t frame;
    if (!sock.recv(frame, zmq::recv_flags::dontwait)) continue;
    while (frame.more()) {
      zmq::message_t next;
      if (!sock.recv(next, zmq::recv_flags::none)) break;
      frame = std::move(next);
    }
    Message m;
    try {
      m = decode(std::string_view(static_cast<const char*>(frame.data()), frame.size()));
    } catch (const ProtocolError& e) {
      zmq_socket_monitor(sock.handle(), nullptr, 0);
      throw Error(ExitStatus::data, o.endpoint + ": the answer cannot be read: " + e.what());
    }
    if (auto* r = std::get_if<Reply>(&m)) {
      if (r->id != request.id) continue;  // not ours
      zmq_socket_monitor(sock.handle(), nullptr, 0);
      return std::move(*r);
    }
    if (auto* e = std::get_if<ErrorMessage>(&m)) {
      zmq_socket_monitor(sock.handle(), nullptr, 0);
      ExitStatus s = e->code == "refused" ? ExitStatus::no_perm : ExitStatus::data;
      throw Error(s, o.endpoint + " did not take the request: " + e->error);
    }
  }
  zmq_socket_monitor(sock.handle(), nullptr, 0);
  throw Error(ExitStatus::unavailable, "no answer from " + o.endpoint + " within " +
                                           fmt_timeout(o.timeout) +
                                           " (is sia-ctl serve running there?)");
}

nlohmann::json call_document(const ClientOptions& options, Request request) {
  Reply r = call(options, std::move(request));
  if (!r.ok) {
    ExitStatus s = static_cast<ExitStatus>(r.status);
    throw Error(s, r.error.empty() ? "the controller refused the request" : r.error);
  }
  return r.document;
}

}  // namespace sia::channel
