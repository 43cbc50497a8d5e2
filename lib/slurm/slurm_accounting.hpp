// Slurm's accounting of sia's jobs, as `sacct` gives it: for each Slurm job id asked for,
// its state, elapsed time and exit code -- the figures `sia-ctl history` shows beside its
// own. sacct_args() is the one command (allocations only, parsable, no header:
//   sacct -X -n -P -j ID,ID... -o JobID,State,Elapsed,ExitCode);
// parse_sacct() reads its output and takes any text: a malformed line is one Error(data)
// naming the line and the field, never a crash. A heterogeneous job's components
// (ID+0, ID+1) are read as one job, ID: the first component's figures.
// read_accounting() runs the command and never throws: where Slurm keeps no accounting
// (no slurmdbd: "accounting storage is disabled") or sacct fails, it says so in one note.
// Thread-safety: pure functions, plain values; read_accounting is as its runner.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/command_runner.hpp"

namespace sia::slurm {

struct AccountedJob {
  long id = 0;
  std::string state;    // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, RUNNING, ...
  double elapsed = 0;   // seconds
  int exit_code = 0;    // the batch script's exit status
  int exit_signal = 0;  // the signal that ended it, 0 for none
  bool operator==(const AccountedJob&) const = default;
};

std::vector<std::string> sacct_args(const std::vector<long>& ids);

// "[DD-[HH:]]MM:SS" (sacct's Elapsed) in seconds; Error(data) naming `what` otherwise.
double parse_elapsed(std::string_view text, const std::string& what);

// Job id -> its figures, from sacct_args()'s output.
std::map<long, AccountedJob> parse_sacct(std::string_view text);

struct Accounting {
  bool available = false;  // sacct answered
  std::string note;        // why there are no figures, one line ("" when available)
  std::map<long, AccountedJob> jobs;
};
Accounting read_accounting(CommandRunner& runner, const std::vector<long>& ids);

}  // namespace sia::slurm
