// CommandRunner: the one seam through which sia runs Slurm's commands (scontrol, squeue,
// sbatch, scancel, sinfo): argv and a time limit in, status and output out. ProcessRunner
// runs them for real (lib/os run_process) with SLURM_CONF and bin_dir from [slurm]; tests
// put a fake behind the same interface. A command that could not run at all, ran past its
// time, or said it cannot reach slurmctld, is reported by slurm_unreachable() as one line
// "slurm: slurmctld not reachable (...)", status 69.
// run_as runs a command as another local user: a controller running as root submits and
// cancels each job as the job's user (exec/run_as.hpp's rule). The child switches its
// supplementary groups, group and user id before exec (os/spawn.hpp, SpawnOptions::account)
// -- rather than root's `sbatch --uid/--gid`: the user's own munge credential then reaches
// slurmctld, so Slurm applies that user's limits, partitions and accounts (not root's),
// scancel as the user can cancel nothing but the user's own jobs whatever its argument,
// and neither depends on options Slurm has deprecated. Its working directory is / (the
// controller's may be closed to the user).
// Thread-safety: ProcessRunner is as run_process (callable from several threads); fakes say.
#pragma once

#include <string>
#include <vector>

#include "os/account.hpp"
#include "os/spawn.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::slurm {

struct CommandResult {
  bool ran = false;  // false: not started, not executable, or killed at its time limit
  int status = 0;    // its exit status when it ran
  std::string out;   // its standard output
  std::string err;   // its standard error (the first line names the failure)
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // argv[0] is the command's name ("scontrol"); the runner finds it.
  virtual CommandResult run(const std::vector<std::string>& argv, double timeout_s) = 0;
  // The same, as `user` (the caller must be root, or be that user).
  virtual CommandResult run_as(const os::Account& user, const std::vector<std::string>& argv,
                               double timeout_s) = 0;
};

class ProcessRunner : public CommandRunner {
 public:
  explicit ProcessRunner(const SlurmSettings& settings);
  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override;
  CommandResult run_as(const os::Account& user, const std::vector<std::string>& argv,
                       double timeout_s) override;

 private:
  CommandResult run_with(os::SpawnOptions o, double timeout_s);
  std::string conf_, bin_dir_;
};

// Runs argv; returns its standard output when it exited 0. Otherwise throws
// Error(unavailable) "slurm: slurmctld not reachable (COMMAND: FIRST LINE OF ITS ERROR)".
std::string run_or_throw(CommandRunner& runner, const std::vector<std::string>& argv,
                         double timeout_s);

}  // namespace sia::slurm
