// LeaseMemory: the lease each node's agent said in its last READY (lease.hpp), kept in one
// small file of the controller's state directory (STATE/leases.json, a NodeLeases
// document, sia-formats(5)), so that a controller restarted while a node is silent holds
// that node for its agent's own lease, not the assumed one, until the node's next READY
// (lease_before_ready). It promises:
//   - reading is tolerant: a missing file is no lease known; one that cannot be read, is
//     a symbolic link or another non-regular file (refused, never followed: safe_open.hpp)
//     or does not parse as the document is one warning line naming the file, the field
//     and what was expected, and then no lease is known (each node gets the assumed lease,
//     as before the file existed) -- never an error that stops the controller;
//   - remember() replaces the file atomically (os/atomic_file.hpp: a temporary, fsync,
//     rename over the name, so a link planted there is replaced, not written through) and
//     only when a node's lease changed; a READY without a lease forgets the node's (the
//     assumed lease is the one that applies to it now); a write that fails is one warning
//     line and changes nothing else (the next change tries again).
// Thread-safety: one thread (the controller's loop) uses an instance.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "channel/lease.hpp"

namespace sia::channel {

// The document kind of the file.
inline constexpr const char* kLeasesKind = "NodeLeases";

class LeaseMemory {
 public:
  // Reads `path` (see above); `warn` takes the warning lines (one line, no newline).
  LeaseMemory(std::string path, std::function<void(const std::string&)> warn);

  // Each node's lease as last remembered, by node.
  const std::map<std::string, Lease>& leases() const { return leases_; }

  // `node`'s agent said `said` in its READY (nullopt: no lease).
  void remember(const std::string& node, const std::optional<Lease>& said);

 private:
  void write();

  std::string path_;
  std::function<void(const std::string&)> warn_;
  std::map<std::string, Lease> leases_;
};

// The NodeLeases document of `leases` (one line, with its newline), and its reading: status
// 65 naming `file` and the field when `text` is not one (a node name outside the rule of
// core/names.hpp, a lease figure that is not a finite number, fence_after > 0, grace >= 0).
std::string leases_document(const std::map<std::string, Lease>& leases);
std::map<std::string, Lease> parse_leases(const std::string& text, const std::string& file);

// The leases of the file `path`: none when it does not exist; Error naming the file when it
// is a symbolic link or another non-regular file (status 77, never followed), larger than
// a controller writes, or not the document (parse_leases). What LeaseMemory reads, and
// what sia-ctl fsck checks.
std::map<std::string, Lease> read_leases(const std::string& path);

}  // namespace sia::channel
