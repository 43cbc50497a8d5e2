// run_process: runs one program to completion (spawn.hpp) -- feeding it `input` on a pipe
// when its standard input is Stream::pipe, collecting its standard output and error when
// they are pipes -- under a time limit: after `timeout` seconds its process group gets
// SIGTERM, `kill_grace` seconds later SIGKILL, and once it has ended whatever it left in
// its group is killed too. A grandchild that keeps the pipes open holds the call up for 2 s
// at most after the program ended. Writing to a program that stopped reading never raises
// SIGPIPE in the caller. With `max_out` > 0, standard output beyond `max_out` bytes is not
// kept: `out` holds the first `max_out` bytes, `out_overflow` is set, the stdout pipe is
// closed and the group gets SIGTERM (SIGKILL `kill_grace` seconds later), as for a
// timeout -- a program printing without end costs neither memory nor the time limit.
// Standard error is kept up to the same size. Part of lib/os.
// The program must run in its own group (Group::own). A program that could not be started
// is thrown (spawn's errors); one that could not be executed is reported (exec_errno) with
// its exit (127 or 126).
// Thread-safety: as spawn(): callable from several threads at once.
#pragma once

#include <cstddef>
#include <string>

#include "os/process_exit.hpp"
#include "os/spawn.hpp"

namespace sia::os {

struct RunResult {
  ProcessExit exit;
  bool timed_out = false;
  int exec_errno = 0;         // the program could not be executed (Process::exec_errno)
  std::string exec_error;     // ... and why (Process::exec_error)
  std::string out, err;       // what it wrote to its stdout/stderr pipes
  bool out_overflow = false;  // stdout went past max_out (out holds its first max_out bytes)
  double seconds = 0;         // wall time
};

RunResult run_process(const SpawnOptions& options, const std::string& input, double timeout,
                      double kill_grace, std::size_t max_out = 0);

}  // namespace sia::os
