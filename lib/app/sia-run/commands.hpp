// sia-run's subcommands as library calls: apply (make this node run what a placement
// gives it), run (the same, in the foreground, waiting for the jobs and propagating
// their exit status like srun), stop (checkpoint-stop jobs), status (what runs), reports
// (the workers' report lines from given offsets on, see report_lines.hpp), logs (a rank's
// log, see rank_log.hpp), and the hidden supervise (one job's supervisor, started by
// apply and run).
// Each returns the program's exit status or throws sia::Error; output goes to stdout.
// Thread-safety: process-wide (signals, children, the state directory lock).
#pragma once

#include <string>
#include <vector>

#include "cli/tool.hpp"
#include "exec/node_apply.hpp"
#include "exec/rank_log.hpp"

namespace sia::exec {

struct StopArgs : CommonArgs {
  std::vector<std::string> jobs;
  double grace = 120;
};

struct StatusArgs : CommonArgs {
  std::vector<std::string> jobs;  // empty: all
};

struct ReportsArgs : CommonArgs {
  std::vector<std::string> after;  // "JOB=OFFSET"
};

struct LogsArgs : CommonArgs {
  LogRequest request;     // tail < 0 and offset 0: the whole log
  bool follow = false;    // then print what the ranks append until the job ends on this node
  bool document = false;  // print one RunLog document (-o json) instead of the text
};

struct SuperviseArgs {
  std::string state_dir;
  std::string job;
  int generation = 0;
};

int run_apply(const ApplyArgs& args);
int run_foreground(const ApplyArgs& args);
int run_stop(const StopArgs& args);
int run_status(const StatusArgs& args);
int run_reports(const ReportsArgs& args);
int run_logs(const LogsArgs& args);
int run_supervise(const SuperviseArgs& args);

}  // namespace sia::exec
