// CannedRunner: the slurm::CommandRunner of the unit tests that need Slurm's commands to
// answer fixed text (sacct's lines, scontrol's nodes and jobs, a dead slurmctld). Every
// call's argv is kept in `calls`; it answers {ran, status, out, err}, with `out_for`'s text
// instead of `out` for a command whose last word it names ("node", "job" of scontrol).
// run_as answers as run. Thread-safety: one thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "slurm/command_runner.hpp"

namespace sia::slurm::test {

struct CannedRunner : CommandRunner {
  int status = 0;
  std::string out, err;
  std::map<std::string, std::string> out_for;  // argv's last word -> out
  std::vector<std::vector<std::string>> calls;

  CommandResult run(const std::vector<std::string>& argv, double) override {
    calls.push_back(argv);
    auto it = argv.empty() ? out_for.end() : out_for.find(argv.back());
    return {true, status, it == out_for.end() ? out : it->second, err};
  }
  CommandResult run_as(const os::Account&, const std::vector<std::string>& argv,
                       double timeout) override {
    return run(argv, timeout);
  }
};

}  // namespace sia::slurm::test
