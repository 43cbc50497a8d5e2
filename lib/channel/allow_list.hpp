// The allow-list: which CURVE public keys may talk to the controller, and as whom.
//   [[agent]]            [[client]]
//   node = "t4-0"        name = "alice"
//   key = "<z85>"        key = "<z85>"
//                        admin = true     (optional: may act on every client's jobs)
//                        user = "alice"   (optional: the local account its jobs run as on
//                                          the nodes, resolved there; core/run_as.hpp)
// A key names one identity (a key listed twice is an error); a node or client may have
// several keys (rotation). Errors are status 78 (66 when the file is missing), naming the
// file and field ("allow.toml: agent[1].key: expected a 40-character Z85 CURVE key").
// Thread-safety: immutable after reading.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "channel/identity.hpp"

namespace sia::channel {

class AllowList {
 public:
  AllowList() = default;

  // Reads the TOML file (or its JSON twin).
  static AllowList read(const std::string& file);
  static AllowList parse(const std::string& text, const std::string& file);

  void add(const std::string& key, const Identity& who);  // status 78 on a duplicate key
  // Who `key` (z85) is, if it is listed.
  std::optional<Identity> find(const std::string& key) const;
  std::size_t size() const { return by_key_.size(); }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, Identity> by_key_;
};

}  // namespace sia::channel
