#include "channel/identity.hpp"

#include "channel/protocol.hpp"

namespace sia::channel {

std::string Identity::user_id() const {
  return std::string(is_agent() ? "agent:" : "client:") + name;
}

std::string Identity::describe() const {
  if (!key.empty()) return user_id() + " (key " + key + ")";
  return user_id() + (authenticated ? "" : " (unauthenticated)");
}

std::optional<Identity> parse_user_id(std::string_view user_id) {
  Identity id;
  std::string_view name;
  if (user_id.substr(0, 6) == "agent:") {
    id.kind = Identity::Kind::agent;
    name = user_id.substr(6);
  } else if (user_id.substr(0, 7) == "client:") {
    id.kind = Identity::Kind::client;
    name = user_id.substr(7);
  } else {
    return std::nullopt;
  }
  if (!valid_peer_name(name)) return std::nullopt;
  id.name = std::string(name);
  return id;
}

}  // namespace sia::channel
