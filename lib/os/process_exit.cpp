#include "os/process_exit.hpp"

#include <sys/wait.h>

#include <cstring>

namespace sia::os {

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

}  // namespace sia::os
