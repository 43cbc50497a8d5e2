// ChildProcess: a program run as a child -- standard input from /dev/null, standard output
// and error to files, in a process group of its own (a terminal's ^C reaches the parent
// only) -- whose end is polled without blocking. Destroying a ChildProcess does not stop
// the program: `sia-run apply` finishes what it began even if the agent goes away.
// Thread-safety: one thread; forks.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sia::channel {

class ChildProcess {
 public:
  // Status 69 when the program cannot be started (missing, not executable).
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_file,
               const std::string& stderr_file);
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess() = default;

  pid_t pid() const { return pid_; }
  // The exit status once it ended (128 + N when killed by signal N), else nullopt.
  std::optional<int> poll();
  // Waits for the end (tests, shutdown).
  int wait();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace sia::channel
