#include "core/run_as.hpp"

#include <nlohmann/json.hpp>

namespace sia {

bool valid_account_name(std::string_view name) {
  if (name.empty() || name.size() > 32 || name.front() == '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || (c == '$' && i + 1 == name.size());
    if (!ok) return false;
  }
  return name != "." && name != "..";
}

nlohmann::json run_as_to_json(const RunAs& r) {
  return {{"user", r.user}, {"submitter", r.submitter}, {"admin", r.admin}};
}

RunAs parse_run_as(const Node& n) {
  if (!n.is_object()) n.expected("an object {user, submitter, admin}");
  RunAs r;
  if (auto u = n.get("user")) {
    r.user = u->as_string();
    if (!r.user.empty() && !valid_account_name(r.user)) {
      u->expected("an account name (up to 32 letters, digits, '.', '_' or '-')");
    }
  }
  r.submitter = n.string_or("submitter", "");
  r.admin = n.bool_or("admin", false);
  return r;
}

std::string describe_run_as(const RunAs& r) {
  if (!r.user.empty()) return r.user;
  if (r.admin) return "the node's user (admin " + r.submitter + ")";
  return "the node's user, never root (" + r.submitter + " has no user)";
}

}  // namespace sia
