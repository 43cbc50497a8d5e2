// ProcessExit: how a process ended -- an exit code or the signal that killed it -- decoded
// from waitpid()'s status word once, here, for every caller. Part of lib/os.
// Thread-safety: plain values.
#pragma once

#include <string>

namespace sia::os {

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

}  // namespace sia::os
