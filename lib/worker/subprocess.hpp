// run_subprocess: runs one program to completion (os/run_process.hpp) the way sia-profile
// runs a worker -- in its own process group, killed if the parent dies (PR_SET_PDEATHSIG),
// stdin from /dev/null, stdout and stderr appended to a log file, extra environment
// variables set, and a time limit after which the group gets SIGTERM and, 10 s later,
// SIGKILL. A log that cannot be opened is an error (status 73).
// Thread-safety: as os::run_process.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sia::worker {

struct Subprocess {
  std::vector<std::string> argv;                         // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // set (or replaced) in the child
  std::string log_path;                                  // "" = inherit stdout/stderr
  double timeout = 0;                                    // seconds; 0 = none
};

struct ExitInfo {
  int status = 0;  // exit status, or 128 + N for a signal; 127: could not exec
  bool timed_out = false;
  double seconds = 0;  // wall time
};

ExitInfo run_subprocess(const Subprocess& p);

// The last `lines` lines of a text file ("" if unreadable).
std::string tail_of_file(const std::string& path, int lines);

}  // namespace sia::worker
