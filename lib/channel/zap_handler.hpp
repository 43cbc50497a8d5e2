// ZapHandler: the ZeroMQ authentication handler (ZAP, RFC 27) of the controller's process.
// It binds inproc://zeromq.zap.01 in the given context -- so it must exist before any
// CURVE server socket of that context accepts connections -- and answers each CURVE
// handshake from its own thread: a client key on the allow-list is accepted with User-Id
// "agent:NODE" or "client:NAME", the key itself as the "Sia-Key" property
// and, for an admin client, "Sia-Admin" = "1"; any other
// key, and any mechanism but CURVE, is refused (the client sees the handshake fail with
// status 400 and never gets to send a message). Each refusal is queued as a log line
// naming the key and the peer's address.
// Thread-safety: the handler thread owns its sockets; set_allow_list() and
// take_refusals() may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "channel/allow_list.hpp"

namespace sia::channel {

class ZapHandler {
 public:
  // Status 70 if the ZAP endpoint is taken already (one handler per context).
  ZapHandler(zmq::context_t& context, AllowList allow);
  ~ZapHandler();  // stops the thread
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  void set_allow_list(AllowList allow);
  // The refusals logged since the last call, oldest first.
  std::vector<std::string> take_refusals();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The ZAP property holding the peer's z85 public key.
inline constexpr const char* kKeyProperty = "Sia-Key";
// The ZAP property "1" of an admin client key (allow-list admin = true); absent otherwise.
inline constexpr const char* kAdminProperty = "Sia-Admin";
inline constexpr const char* kAccountProperty = "Sia-User";  // a [[client]]'s user, when set

}  // namespace sia::channel
