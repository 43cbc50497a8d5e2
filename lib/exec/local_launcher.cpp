#include "exec/local_launcher.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "exec/run_as.hpp"
#include "os/clock.hpp"
#include "os/spawn.hpp"

namespace sia::exec {

namespace {

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  return set;
}

void append(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void append_line(const std::string& path, const std::string& line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  append(fd, line + "\n");
  ::close(fd);
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
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(c.log).parent_path(), ec);
  int log = ::open(c.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    result.error = c.log + ": cannot open the log: " + std::strerror(errno);
    return result;
  }
  if (!c.header.empty()) append(log, c.header + "\n");
  ::close(log);
  os::SpawnOptions o;
  try {
    o.account = job_account(c.run_as, c.node);
    if (o.account) os::give_to(c.log, *o.account);
  } catch (const Error& e) {
    result.error = e.what();
    append_line(c.log, "sia-run: " + result.error);
    return result;
  }
  o.argv = c.argv;
  o.env.assign(c.env.begin(), c.env.end());
  o.cwd = c.cwd;
  o.out = o.err = os::Stream::append_to(c.log);
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
    append_line(c.log, "sia-run: " + result.error);
  }
  result.pid = pid;
  ranks_[pid] = Rank{c.rank, c.log};
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
        append_line(it->second.log, "sia-run: rank " + std::to_string(it->second.rank) + " (pid " +
                                        std::to_string(pid) + ") ended: " + ev.exit.describe());
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
