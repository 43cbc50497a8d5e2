// run_piped: runs one program to completion with a given standard input, capturing its
// standard output and standard error -- how the controller runs an external stage
// (`--stage solve='sia-solve --policy themis'`) and a node command (`sia-run apply`,
// possibly through ssh). The program runs in its own process group with stdin, stdout and
// stderr as pipes; after `timeout` seconds the group gets SIGTERM and, 5 s later, SIGKILL.
// With `max_out` > 0 its standard output is read up to `max_out` bytes only: past that,
// `oversized` is set and the program is stopped (os/run_process.hpp).
// A program name without a slash is looked up beside the running executable first (so a
// build tree's sia-ctl finds its own sia-run), then in PATH.
// Thread-safety: call from one thread at a time (it forks and waits for its own child).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sia::ctl {

struct PipedResult {
  int status = 0;  // exit status, 128 + N for a signal, 127 when it could not be executed
  bool timed_out = false;
  bool oversized = false;  // it printed more than max_out bytes (out holds the first ones)
  std::string out;
  std::string err;
  double seconds = 0;
};

PipedResult run_piped(const std::vector<std::string>& argv, const std::string& input,
                      double timeout,
                      const std::vector<std::pair<std::string, std::string>>& env = {},
                      std::size_t max_out = 0);

// argv[0] resolved as described above (unchanged when nothing better is found).
std::string resolve_program(const std::string& program);

// "sia-solve: error: ..." -> the last non-empty line of a program's stderr, for messages.
std::string last_line(const std::string& text);

}  // namespace sia::ctl
