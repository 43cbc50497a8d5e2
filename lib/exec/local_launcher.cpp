#include "exec/local_launcher.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>

#include "core/error.hpp"

extern char** environ;

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

// argv/envp as the C arrays exec wants; the strings live in `store`.
std::vector<char*> c_strings(std::vector<std::string>& store) {
  std::vector<char*> out;
  for (auto& s : store) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos && extra.count(std::string(kv.substr(0, eq)))) continue;
    env.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

// What the child reports through the exec pipe when it cannot run the program.
struct ChildFailure {
  int stage;  // 0: chdir, 1: exec
  int error;
};

[[noreturn]] void child_fail(int fd, int stage, int err) {
  ChildFailure f{stage, err};
  [[maybe_unused]] ssize_t n = ::write(fd, &f, sizeof f);
  ::_exit(err == ENOENT ? 127 : 126);
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
  int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipe_fds[2];
  if (null_in < 0 || ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("cannot start rank: ") + std::strerror(errno);
    ::close(log);
    if (null_in >= 0) ::close(null_in);
    return result;
  }
  std::vector<std::string> argv_store = c.argv;
  std::vector<std::string> env_store = merged_environment(c.env);
  std::vector<char*> argv = c_strings(argv_store);
  std::vector<char*> envp = c_strings(env_store);
  const pid_t parent = ::getpid();
  const pid_t group = group_;

  pid_t pid = ::fork();
  if (pid == 0) {
    // The child: only async-signal-safe calls from here to exec.
    ::setpgid(0, group);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the supervisor died before prctl
    ::dup2(null_in, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!c.cwd.empty() && ::chdir(c.cwd.c_str()) != 0) child_fail(pipe_fds[1], 0, errno);
    ::execvpe(argv[0], argv.data(), envp.data());
    child_fail(pipe_fds[1], 1, errno);
  }
  int fork_errno = errno;
  ::close(pipe_fds[1]);
  ::close(null_in);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(log);
    result.error = std::string("cannot start rank: fork: ") + std::strerror(fork_errno);
    return result;
  }
  if (group_ == 0) group_ = pid;
  ::setpgid(pid, group_);  // also here, so the group exists whichever runs first
  ChildFailure failure{};
  ssize_t n;
  do {
    n = ::read(pipe_fds[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (n == static_cast<ssize_t>(sizeof failure)) {
    result.error =
        failure.stage == 0
            ? "cannot change to directory '" + c.cwd + "': " + std::strerror(failure.error)
            : "cannot execute '" + c.argv[0] + "': " + std::strerror(failure.error);
    append(log, "sia-run: " + result.error + "\n");
  }
  ::close(log);
  result.pid = pid;
  ranks_[pid] = Rank{c.rank, c.log};
  return result;
}

void LocalLauncher::signal_all(int sig) {
  if (group_ > 0) ::killpg(group_, sig);  // ESRCH: the group is gone, nothing to do
}

WaitEvent LocalLauncher::wait(std::optional<std::chrono::milliseconds> timeout) {
  using namespace std::chrono;
  const auto deadline = steady_clock::now() + timeout.value_or(milliseconds(0));
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
      auto left = duration_cast<nanoseconds>(deadline - steady_clock::now());
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
