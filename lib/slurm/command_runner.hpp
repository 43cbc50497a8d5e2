// CommandRunner: the one seam through which sia runs Slurm's commands (scontrol, squeue,
// sbatch, scancel, sinfo): argv and a time limit in, status and output out. ProcessRunner
// runs them for real (lib/os run_process) with SLURM_CONF and bin_dir from [slurm]; tests
// put a fake behind the same interface. A command that could not run at all, ran past its
// time, or said it cannot reach slurmctld, is reported by slurm_unreachable() as one line
// "slurm: slurmctld not reachable (...)", status 69.
// Thread-safety: ProcessRunner is as run_process (callable from several threads); fakes say.
#pragma once

#include <string>
#include <vector>

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
};

class ProcessRunner : public CommandRunner {
 public:
  explicit ProcessRunner(const SlurmSettings& settings);
  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override;

 private:
  std::string conf_, bin_dir_;
};

// Runs argv; returns its standard output when it exited 0. Otherwise throws
// Error(unavailable) "slurm: slurmctld not reachable (COMMAND: FIRST LINE OF ITS ERROR)".
std::string run_or_throw(CommandRunner& runner, const std::vector<std::string>& argv,
                         double timeout_s);

}  // namespace sia::slurm
