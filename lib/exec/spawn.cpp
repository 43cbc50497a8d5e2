#include "exec/spawn.hpp"

#include <signal.h>

#include <cstring>

#include "core/error.hpp"
#include "os/spawn.hpp"

namespace sia::exec {

pid_t spawn_helper(const std::vector<std::string>& argv, const std::string& log, bool detached) {
  os::SpawnOptions o;
  o.argv = argv;
  o.search_path = false;
  o.out = o.err = os::Stream::append_to(log);
  o.group = detached ? os::Group::detached : os::Group::own;
  o.parent_death_signal = detached ? 0 : SIGTERM;
  o.blocked_signals = std::vector<int>{SIGCHLD, SIGTERM, SIGINT, SIGHUP};
  os::Process p;
  try {
    p = os::spawn(o);
  } catch (const Error& e) {
    throw Error(ExitStatus::unavailable, std::string("cannot start a supervisor: ") + e.what());
  }
  if (p.exec_errno() != 0) {
    if (!detached) p.wait();
    throw Error(ExitStatus::unavailable,
                "cannot execute " + argv.front() + ": " + std::strerror(p.exec_errno()));
  }
  return p.pid();
}

}  // namespace sia::exec
