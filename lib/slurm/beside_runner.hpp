// BesideRunner: a CommandRunner that runs each Slurm command through another runner on a
// thread of its own while the calling thread keeps calling `meanwhile` (the daemon pumps
// its channel there: clients are answered while sbatch, scancel or a query that waits
// for an unreachable slurmctld takes its time). The command's own time limit still ends
// it; BesideRunner adds none and waits for it.
// Thread-safety: run() from one thread at a time; `inner` must allow being called from
// another thread (ProcessRunner does); `meanwhile` runs on the caller's thread only.
#pragma once

#include <functional>
#include <memory>

#include "slurm/command_runner.hpp"

namespace sia::slurm {

class BesideRunner : public CommandRunner {
 public:
  // `meanwhile` should return within a short while (e.g. poll 20 ms).
  BesideRunner(std::unique_ptr<CommandRunner> inner, std::function<void()> meanwhile);
  CommandResult run(const std::vector<std::string>& argv, double timeout_s) override;
  CommandResult run_as(const os::Account& user, const std::vector<std::string>& argv,
                       double timeout_s) override;

 private:
  CommandResult beside(const std::function<CommandResult()>& command);
  std::unique_ptr<CommandRunner> inner_;
  std::function<void()> meanwhile_;
};

}  // namespace sia::slurm
