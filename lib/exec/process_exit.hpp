// ProcessExit: how a process ended -- an exit code or the signal that killed it -- and the
// srun rule sia-run uses to fold many of them into one status: the highest exit code,
// else 128 + the highest signal.
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sia::exec {

struct ProcessExit {
  int code = 0;    // meaningful when signal == 0
  int signal = 0;  // the signal that ended the process; 0 when it exited

  static ProcessExit exited(int code) { return {code, 0}; }
  static ProcessExit killed(int signal) { return {0, signal}; }
  static ProcessExit from_wait_status(int status);  // waitpid()'s status word

  bool success() const { return signal == 0 && code == 0; }
  int status() const { return signal ? 128 + signal : code; }  // as a shell reports it
  std::string describe() const;  // "exit status 3", "signal 9 (Killed)"
  bool operator==(const ProcessExit&) const = default;
};

// The srun rule: the highest non-zero exit code, else the highest signal, else success.
// nullopt for an empty list.
std::optional<ProcessExit> combine_exits(const std::vector<ProcessExit>& exits);

// Exit status of "preempted, resume me" in the worker contract (sysexits' EX_TEMPFAIL).
inline constexpr int kPreemptedExit = 75;

}  // namespace sia::exec
