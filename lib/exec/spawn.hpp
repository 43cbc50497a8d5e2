// Starting sia-run's own helper processes (a job's supervisor) through os::spawn: a program
// started with standard input from /dev/null, standard output and error appended to a log,
// and SIGCHLD, SIGTERM, SIGINT and SIGHUP blocked (a supervisor takes them with sigwait).
//   detached  in a new session, re-parented to init by a double fork: it outlives the
//             caller (sia-run apply from a shell loop or cron)
//   attached  a child of the caller in its own process group (a terminal's ^C reaches
//             the caller only) that gets SIGTERM when the caller dies (sia-run run)
// Thread-safety: as os::spawn.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sia::exec {

// Returns the new process's pid. Status 69 when it cannot be started or executed.
pid_t spawn_helper(const std::vector<std::string>& argv, const std::string& log, bool detached);

}  // namespace sia::exec
