// ProcessId: a process named so that the name cannot be confused with a later process
// that reuses its pid -- the pid plus the process's start time (clock ticks since boot)
// and the boot id. sia-run records its supervisors this way in the state directory and
// asks whether they are still alive after a reboot, a crash or days of pid churn.
// Thread-safety: free functions reading /proc; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace sia::exec {

struct ProcessId {
  pid_t pid = 0;
  std::uint64_t start = 0;  // /proc/PID/stat field 22
  std::string boot;         // /proc/sys/kernel/random/boot_id
};

// The identity of a running process; pid 0 in the result when it does not exist.
ProcessId identify(pid_t pid);
ProcessId identify_self();
// True while the very process `id` names runs (a zombie counts as ended).
bool is_alive(const ProcessId& id);

}  // namespace sia::exec
