// LocalLauncher: runs a job's ranks as child processes of the calling process, on this
// machine. Every rank is put in the job's process group (the first rank leads it), gets
// PR_SET_PDEATHSIG(SIGKILL) so it cannot outlive its supervisor, has standard input from
// /dev/null and standard output and error appended to its log, and starts with default
// signal dispositions and an empty signal mask. When a rank ends, a line saying how is
// appended to its log. The log lies in a directory the job's user owns: the launcher opens
// it once, by os/safe_open.hpp's rule (never through a link the job planted; 0600, handed
// to the job's account through the descriptor), gives the rank that descriptor and keeps
// it for the line at the end -- the log's name is not looked up again.
// While it exists the launcher keeps SIGCHLD, SIGTERM, SIGINT and SIGHUP blocked in the
// calling thread and takes them from wait(): a termination signal is reported as an
// `interrupted` event (a request to stop the job), never acted on by default.
// Thread-safety: one per process (it reaps every child of the process), one thread.
#pragma once

#include <signal.h>

#include <map>
#include <memory>

#include "exec/launcher.hpp"
#include "os/safe_open.hpp"

namespace sia::exec {

class LocalLauncher final : public Launcher {
 public:
  LocalLauncher();
  ~LocalLauncher() override;
  LocalLauncher(const LocalLauncher&) = delete;
  LocalLauncher& operator=(const LocalLauncher&) = delete;

  StartResult start(const RankCommand& command) override;
  void signal_all(int sig) override;
  WaitEvent wait(std::optional<std::chrono::milliseconds> timeout) override;
  pid_t group() const override { return group_; }

 private:
  struct Rank {
    int rank = 0;
    std::shared_ptr<os::Fd> log;  // the log as opened at the start
  };
  pid_t group_ = 0;
  std::map<pid_t, Rank> ranks_;
  sigset_t old_mask_;
  struct sigaction old_chld_;
};

// The signals a supervising process takes as "stop the job": SIGTERM, SIGINT, SIGHUP.
bool is_stop_signal(int sig);

}  // namespace sia::exec
