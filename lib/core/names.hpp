// Names sia gives things that become file names, ZeroMQ peer names and table keys: jobs,
// nodes, clients, apps, GPU types. One rule for all: 1 to `max_length` characters of
// [A-Za-z0-9._-], not starting with '.' (no hidden or relative path component: not "." or
// "..") nor with '-' (never taken for a flag where a name reaches a command line: sia-run
// --node NAME, sia-run logs JOB, ssh ADDRESS in [nodes] commands).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace sia {

inline bool valid_name(std::string_view name, std::size_t max_length) {
  if (name.empty() || name.size() > max_length || name.front() == '.' || name.front() == '-') {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The rule in words, for messages: "expected a job name of " + kNameRule.
inline constexpr std::string_view kNameRule =
    "letters, digits, '.', '_' or '-', not starting with '.' or '-'";

inline constexpr std::size_t kMaxJobName = 200;   // a job: a directory name on every node
inline constexpr std::size_t kMaxNodeName = 253;  // a node or client: a host name's length

inline bool valid_job_name(std::string_view name) {
  return valid_name(name, kMaxJobName);
}
inline bool valid_node_name(std::string_view name) {
  return valid_name(name, kMaxNodeName);
}

// A node's address as a cluster file gives it (a host name, an IP address, user@host),
// which [nodes] commands pass to ssh and the like: not empty, at most kMaxNodeName
// characters of printable ASCII (no white space, control characters or other bytes: a host
// name is ASCII, and a Slurm NodeAddr is text sia must write back as JSON), and not
// starting with '-'.
// The rule in words, for messages: "expected " + kAddressRule.
inline constexpr std::string_view kAddressRule =
    "a host name or address: printable ASCII, no white space, not starting with '-'";

inline bool valid_node_address(std::string_view address) {
  if (address.empty() || address.size() > kMaxNodeName || address.front() == '-') return false;
  for (char c : address) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= ' ' || b >= 0x7f) return false;
  }
  return true;
}

}  // namespace sia
