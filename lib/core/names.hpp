// Names sia gives things that become file names, ZeroMQ peer names and table keys: jobs,
// nodes, clients. One rule for all: 1 to `max_length` characters of [A-Za-z0-9._-], not
// "." or "..", not starting with '.' (no hidden or relative path component).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace sia {

inline bool valid_name(std::string_view name, std::size_t max_length) {
  if (name.empty() || name.size() > max_length || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

inline constexpr std::size_t kMaxJobName = 200;   // a job: a directory name on every node
inline constexpr std::size_t kMaxNodeName = 253;  // a node or client: a host name's length

inline bool valid_job_name(std::string_view name) {
  return valid_name(name, kMaxJobName);
}
inline bool valid_node_name(std::string_view name) {
  return valid_name(name, kMaxNodeName);
}

}  // namespace sia
