// Identity: who sent a message on the control channel -- an agent (by node) or a client
// (by name), with the CURVE public key that proved it when there is one. The ZAP handler
// writes it into the connection's User-Id as "agent:NODE" or "client:NAME"; without CURVE
// (ipc:// only: a peer of the controller's own user) the identity is what it claims.
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sia::channel {

struct Identity {
  enum class Kind { agent, client };
  Kind kind = Kind::client;
  std::string name;            // node (agent) or client name
  std::string key;             // z85 public key; empty without CURVE
  bool authenticated = false;  // true: a CURVE key on the allow-list says so
  bool admin = false;          // an allow-list [[client]] with admin = true
  std::string account{};       // a [[client]]'s user: the local account its jobs run as

  bool is_agent() const { return kind == Kind::agent; }
  std::string user_id() const;   // "agent:NODE", "client:NAME"
  std::string describe() const;  // user_id plus " (key K)" or " (unauthenticated)"
};

// "agent:NODE" / "client:NAME" -> Identity (not authenticated; key empty).
std::optional<Identity> parse_user_id(std::string_view user_id);

}  // namespace sia::channel
