#include "channel/allow_list.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "channel/keys.hpp"
#include "channel/protocol.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "core/node.hpp"
#include "core/run_as.hpp"
#include "core/toml_json.hpp"

namespace sia::channel {

AllowList AllowList::read(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    throw Error(ExitStatus::no_input, file + ": cannot read the allow-list: no such file");
  }
  return parse(read_input(file), file);
}

AllowList AllowList::parse(const std::string& text, const std::string& file) {
  nlohmann::json j;
  std::string trimmed = text.substr(std::min(text.find_first_not_of(" \t\r\n"), text.size()));
  if (!trimmed.empty() && trimmed.front() == '{') {
    j = parse_json_bounded(text);
    if (j.is_discarded()) throw Error(ExitStatus::config, file + ": invalid JSON");
  } else {
    j = toml_to_json(text, file, ExitStatus::config);
  }
  Node root(j, file, "", ExitStatus::config);
  if (!root.is_object()) root.expected("a table");
  AllowList list;
  list.file_ = file;
  auto section = [&](std::string_view key, Identity::Kind kind, std::string_view name_field) {
    auto arr = root.get(key);
    if (!arr) return;
    if (!arr->is_array()) arr->expected("an array of tables ([[" + std::string(key) + "]])");
    arr->each([&](const Node& e) {
      if (!e.is_object()) e.expected("a table");
      Node name = e.at(name_field);
      Identity who;
      who.kind = kind;
      who.name = name.as_string();
      if (!valid_peer_name(who.name)) name.expected("a name of letters, digits, '.', '_' or '-'");
      Node key_node = e.at("key");
      who.key = key_node.as_string();
      if (!valid_z85_key(who.key)) key_node.expected("a 40-character Z85 CURVE public key");
      who.authenticated = true;
      if (auto admin = e.get("admin")) {
        if (kind != Identity::Kind::client) admin->fail("only a [[client]] may be an admin");
        who.admin = admin->as_bool();
      }
      if (auto user = e.get("user")) {
        if (kind != Identity::Kind::client) user->fail("only a [[client]] has a user");
        who.account = user->as_string();
        if (!valid_account_name(who.account)) {
          user->expected("a local account name (up to 32 letters, digits, '.', '_' or '-')");
        }
      }
      if (auto prev = list.find(who.key)) {
        key_node.fail("the key is listed already, for " + prev->user_id());
      }
      list.by_key_[who.key] = who;
    });
  };
  section("agent", Identity::Kind::agent, "node");
  section("client", Identity::Kind::client, "name");
  return list;
}

void AllowList::add(const std::string& key, const Identity& who) {
  if (!valid_z85_key(key)) throw Error(ExitStatus::config, "not a 40-character Z85 CURVE key");
  if (auto prev = find(key)) {
    throw Error(ExitStatus::config, "key " + key + " is listed already, for " + prev->user_id());
  }
  Identity id = who;
  id.key = key;
  id.authenticated = true;
  by_key_[key] = id;
}

std::optional<Identity> AllowList::find(const std::string& key) const {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

}  // namespace sia::channel
