#include "exec/local_launcher.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "exec/run_as.hpp"
#include "os/clock.hpp"
#include "os/make_dirs.hpp"
#include "os/spawn.hpp"

namespace sia::exec {

namespace {

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  return set;
}

}  // namespace

bool is_stop_signal(int sig) {
  return sig == SIGTERM || sig == SIGINT || sig == SIGHUP;
}

LocalLauncher::LocalLauncher() {
  sigset_t set = supervised_signals();
  ::sigprocmask(SIG_BLOCK, &set, &old_mask_);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, &old_chld_);  // SIG_IGN would reap the ranks behind our back
}

LocalLauncher::~LocalLauncher() {
  ::sigaction(SIGCHLD, &old_chld_, nullptr);
  ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

StartResult LocalLauncher::start(const RankCommand& c) {
  StartResult result;
  if (c.argv.empty()) {
    result.error = "rank " + std::to_string(c.rank) + ": empty command";
    return result;
  }
  auto log = std::make_shared<os::Fd>();
  try {
    os::make_dirs(os::split_path(c.log).first);
    *log = os::open_file(c.log, os::Access::append, true, os::kPrivateFile);
  } catch (const Error& e) {
    result.error = std::string("cannot open the log: ") + e.what();
    return result;
  }
  if (!c.header.empty()) os::append_text(log->get(), c.header + "\n");
  os::SpawnOptions o;
  try {
    o.account = job_account(c.run_as, c.node);
    if (o.account) os::give_fd(log->get(), *o.account, std::nullopt, c.log);
  } catch (const Error& e) {
    result.error = e.what();
    os::append_text(log->get(), "sia-run: " + result.error + "\n");
    return result;
  }
  o.argv = c.argv;
  o.env.assign(c.env.begin(), c.env.end());
  o.cwd = c.cwd;
  o.out = o.err = os::Stream::descriptor(log->get());
  o.group = os::Group::join;
  o.join_group = group_;
  o.parent_death_signal = SIGKILL;
  o.all_signals_default = true;
  o.blocked_signals = std::vector<int>{};
  os::Process p;
  try {
    p = os::spawn(o);
  } catch (const Error& e) {
    result.error = std::string("cannot start rank: ") + e.what();
    return result;
  }
  const pid_t pid = p.pid();
  if (group_ == 0) group_ = pid;
  if (p.exec_errno() != 0) {
    result.error = p.exec_error();
    os::append_text(log->get(), "sia-run: " + result.error + "\n");
  }
  result.pid = pid;
  ranks_[pid] = Rank{c.rank, log};
  return result;
}

void LocalLauncher::signal_all(int sig) {
  if (group_ > 0) ::killpg(group_, sig);  // ESRCH: the group is gone, nothing to do
}

WaitEvent LocalLauncher::wait(std::optional<std::chrono::milliseconds> timeout) {
  using namespace std::chrono;
  const auto deadline = os::system_clock().now() + timeout.value_or(milliseconds(0));
  sigset_t set = supervised_signals();
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      WaitEvent ev;
      ev.kind = WaitEvent::Kind::exited;
      ev.pid = pid;
      ev.exit = ProcessExit::from_wait_status(status);
      if (auto it = ranks_.find(pid); it != ranks_.end()) {
        os::append_text(it->second.log->get(), "sia-run: rank " + std::to_string(it->second.rank) +
                                                   " (pid " + std::to_string(pid) +
                                                   ") ended: " + ev.exit.describe() + "\n");
        ranks_.erase(it);
      }
      return ev;
    }
    siginfo_t info;
    int sig;
    if (timeout) {
      auto left = duration_cast<nanoseconds>(deadline - os::system_clock().now());
      if (left.count() <= 0) return WaitEvent{};
      timespec ts{static_cast<time_t>(left.count() / 1000000000),
                  static_cast<long>(left.count() % 1000000000)};
      sig = ::sigtimedwait(&set, &info, &ts);
    } else {
      sig = ::sigwaitinfo(&set, &info);
    }
    if (sig < 0) {
      if (errno == EAGAIN) return WaitEvent{};
      if (errno == EINTR) continue;
      throw Error(ExitStatus::software, std::string("sigtimedwait: ") + std::strerror(errno));
    }
    if (sig == SIGCHLD) continue;
    WaitEvent ev;
    ev.kind = WaitEvent::Kind::interrupted;
    ev.signal = sig;
    return ev;
  }
}

}  // namespace sia::exec
