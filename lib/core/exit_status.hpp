// Exit statuses shared by every sia program (see conventions in man/sia.7). The numbers
// follow sysexits.h so that shell scripts and cron wrappers can tell failures apart.
#pragma once

namespace sia {

enum class ExitStatus : int {
  ok = 0,
  negative = 1,      // ran fine, the answer is "no" (e.g. an unhealthy agent)
  usage = 64,        // bad flags
  data = 65,         // invalid JSON/TOML, wrong kind, unknown apiVersion, failed validation
  no_input = 66,     // input missing or unreadable
  unavailable = 69,  // controller or agent unreachable, no GPU/NCCL when required
  software = 70,     // internal error (a bug)
  cant_create = 73,  // cannot create output
  io = 74,           // I/O error
  temp_fail = 75,    // temporary failure, retry later
  no_perm = 77,      // permission denied
  config = 78,       // configuration error (cluster.toml, daemon config)
};

inline int to_int(ExitStatus s) {
  return static_cast<int>(s);
}

}  // namespace sia
