// Launcher: the seam between supervising one job and the machinery that runs its rank
// processes. A launcher starts ranks (argv, environment, working directory, log file),
// signals all of them at once, and waits for the next thing that happens: a rank ended,
// the supervising process was asked to stop the job, or a timeout passed.
// LocalLauncher (local_launcher.hpp) runs the ranks on this machine; backends for ssh and
// Slurm would implement the same four calls (start through `ssh`/`srun`, signal through
// them, wait on the local client processes). Tests use a scripted fake.
// Thread-safety: one launcher per job, used from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/run_as.hpp"
#include "exec/process_exit.hpp"

namespace sia::exec {

struct RankCommand {
  int rank = 0;
  std::vector<std::string> argv;           // argv[0] is looked up in PATH; no shell
  std::map<std::string, std::string> env;  // set on top of the launcher's own environment
  std::string cwd;                         // empty: the launcher's own
  std::string log;                         // stdout and stderr are appended here
  std::string header;                      // one line appended to the log before the rank starts
  std::optional<RunAs> run_as;             // whom it runs as (exec/run_as.hpp); nullopt: us
  std::string node;                        // this node, for messages
};

struct StartResult {
  pid_t pid = -1;     // -1: no process (the error says why)
  std::string error;  // set when the program could not be started or executed; a rank
                      // whose exec failed still has a pid and ends with status 127 or 126
};

struct WaitEvent {
  enum class Kind { exited, interrupted, timeout };
  Kind kind = Kind::timeout;
  pid_t pid = -1;    // exited: which rank
  ProcessExit exit;  // exited: how
  int signal = 0;    // interrupted: the termination signal the supervisor received
};

class Launcher {
 public:
  virtual ~Launcher() = default;

  // Starts one rank. The ranks of a launcher share one process group, which the first
  // rank creates; each rank dies with the supervising process (PR_SET_PDEATHSIG).
  virtual StartResult start(const RankCommand& command) = 0;
  // Sends `sig` to every process of the job's group; nothing when the group is gone.
  virtual void signal_all(int sig) = 0;
  // Waits up to `timeout` (nullopt: without limit) for the next event.
  virtual WaitEvent wait(std::optional<std::chrono::milliseconds> timeout) = 0;
  // The job's process group id; 0 before the first rank started.
  virtual pid_t group() const = 0;
};

}  // namespace sia::exec
