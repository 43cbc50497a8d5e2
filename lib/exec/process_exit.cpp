#include "exec/process_exit.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>

namespace sia::exec {

ProcessExit ProcessExit::from_wait_status(int status) {
  if (WIFSIGNALED(status)) return killed(WTERMSIG(status));
  if (WIFEXITED(status)) return exited(WEXITSTATUS(status));
  return exited(0);  // stopped/continued are never asked for
}

std::string ProcessExit::describe() const {
  if (signal == 0) return "exit status " + std::to_string(code);
  const char* name = ::strsignal(signal);
  return "signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : "");
}

std::optional<ProcessExit> combine_exits(const std::vector<ProcessExit>& exits) {
  if (exits.empty()) return std::nullopt;
  int code = 0, signal = 0;
  for (const auto& e : exits) {
    if (e.signal) {
      signal = std::max(signal, e.signal);
    } else {
      code = std::max(code, e.code);
    }
  }
  if (code) return ProcessExit::exited(code);
  if (signal) return ProcessExit::killed(signal);
  return ProcessExit::exited(0);
}

}  // namespace sia::exec
