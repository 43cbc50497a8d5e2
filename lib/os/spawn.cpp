#include "os/spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/error.hpp"

extern char** environ;

namespace sia::os {

namespace {

// A descriptor closed when it goes out of scope unless released.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset(int f = -1) {
    if (fd >= 0) ::close(fd);
    fd = f;
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// What the child reports through the report pipe when it cannot run the program.
struct ChildFailure {
  int stage;  // kStageChdir, kStageExec, kStageUser
  int error;
};
constexpr int kStageChdir = 0, kStageExec = 1, kStageUser = 2;

[[noreturn]] void child_fail(int fd, int stage, int err) {
  ChildFailure f{stage, err};
  [[maybe_unused]] ssize_t n = ::write(fd, &f, sizeof f);
  ::_exit(err == ENOENT ? 127 : 126);
}

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// argv/envp as the C arrays exec wants; the strings live in `store`.
std::vector<char*> c_strings(std::vector<std::string>& store) {
  std::vector<char*> out;
  for (auto& s : store) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    bool replaced = false;
    for (const auto& [k, v] : extra) {
      replaced = replaced || (eq != std::string_view::npos && kv.substr(0, eq) == k);
    }
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

[[noreturn]] void cannot_prepare(ExitStatus status, const std::string& what, int err) {
  throw Error(status, what + ": " + std::strerror(err));
}

// `fd` moved above the standard streams (a caller whose stdin is closed gets 0 from open()),
// so that installing one stream in the child never overwrites another.
int above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// The child's end of one standard stream (-1: inherit) and, for a pipe, the caller's end.
void open_stream(const Stream& s, bool input, Fd& child, Fd& parent) {
  switch (s.kind) {
    case Stream::Kind::inherit:
      return;
    case Stream::Kind::null:
      child.reset(above_stdio(::open("/dev/null", (input ? O_RDONLY : O_WRONLY) | O_CLOEXEC)));
      if (child.fd < 0) cannot_prepare(ExitStatus::unavailable, "/dev/null: cannot open", errno);
      return;
    case Stream::Kind::pipe: {
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        cannot_prepare(ExitStatus::unavailable, "cannot create a pipe", errno);
      }
      child.reset(above_stdio(input ? fds[0] : fds[1]));
      parent.reset(input ? fds[1] : fds[0]);
      return;
    }
    case Stream::Kind::append:
    case Stream::Kind::truncate: {
      int mode = input ? O_RDONLY
                       : O_WRONLY | O_CREAT | (s.kind == Stream::Kind::append ? O_APPEND : O_TRUNC);
      child.reset(above_stdio(::open(s.path.c_str(), mode | O_CLOEXEC, 0600)));
      if (child.fd < 0) cannot_prepare(ExitStatus::cant_create, s.path + ": cannot open", errno);
      return;
    }
    case Stream::Kind::descriptor:
      child.reset(::fcntl(s.fd, F_DUPFD_CLOEXEC, 3));
      if (child.fd < 0) cannot_prepare(ExitStatus::cant_create, "cannot use a descriptor", errno);
      return;
  }
}

sigset_t signal_set(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  return set;
}

// Everything the child uses, made before fork().
struct ChildPlan {
  const SpawnOptions* o;
  pid_t parent;
  int fds[3];  // the child's standard streams; -1: inherit
  int report;  // the report pipe's write end
  sigset_t mask;
  std::vector<char*> argv, envp;
  const Account* account;  // null: stay the caller's user
};

// Becomes `a` (groups first, the user id last: each step needs the privilege the next one
// drops), then checks that root cannot be regained.
void switch_user(const Account& a, int report) {
  if (::setgroups(a.groups.size(), a.groups.data()) != 0) child_fail(report, kStageUser, errno);
  if (::setgid(a.gid) != 0) child_fail(report, kStageUser, errno);
  if (::setuid(a.uid) != 0) child_fail(report, kStageUser, errno);
  if (::getuid() != a.uid || ::geteuid() != a.uid || ::getegid() != a.gid) {
    child_fail(report, kStageUser, EPERM);
  }
  if (a.uid != 0 && ::setuid(0) == 0) child_fail(report, kStageUser, EPERM);
}

// The child, from fork() to exec: system calls only.
[[noreturn]] void run_child(const ChildPlan& p) {
  const SpawnOptions& o = *p.o;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  if (o.all_signals_default) {
    for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
  } else {
    for (int s : o.default_signals) ::sigaction(s, &dfl, nullptr);
  }
  for (int i = 0; i < 3; ++i) {
    if (p.fds[i] >= 0) ::dup2(p.fds[i], i);  // above 2 (above_stdio): never one of these
  }
  switch (o.group) {
    case Group::inherit:
      break;
    case Group::own:
      ::setpgid(0, 0);
      break;
    case Group::join:
      ::setpgid(0, o.join_group);
      break;
    case Group::detached: {
      ::setsid();
      pid_t grandchild = ::fork();
      if (grandchild != 0) {
        [[maybe_unused]] ssize_t n = ::write(p.report, &grandchild, sizeof grandchild);
        ::_exit(grandchild < 0 ? 1 : 0);
      }
      break;
    }
  }
  // Before PR_SET_PDEATHSIG, which a change of credentials clears.
  if (p.account) switch_user(*p.account, p.report);
  if (o.parent_death_signal != 0 && o.group != Group::detached) {
    ::prctl(PR_SET_PDEATHSIG, o.parent_death_signal);
    if (::getppid() != p.parent) ::_exit(127);  // the caller died before prctl
  }
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) child_fail(p.report, kStageChdir, errno);
  ::sigprocmask(SIG_SETMASK, &p.mask, nullptr);
  if (o.search_path) {
    ::execvpe(p.argv[0], p.argv.data(), p.envp.data());
  } else {
    ::execve(p.argv[0], p.argv.data(), p.envp.data());
  }
  child_fail(p.report, kStageExec, errno);
}

}  // namespace

Process::Process(Process&& o) noexcept {
  *this = std::move(o);
}

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    close_stdin();
    close_stdout();
    close_stderr();
    pid_ = std::exchange(o.pid_, -1);
    group_ = o.group_;
    exec_errno_ = o.exec_errno_;
    failed_stage_ = o.failed_stage_;
    program_ = std::move(o.program_);
    cwd_ = std::move(o.cwd_);
    user_ = std::move(o.user_);
    in_ = std::exchange(o.in_, -1);
    out_ = std::exchange(o.out_, -1);
    err_ = std::exchange(o.err_, -1);
    exit_ = o.exit_;
  }
  return *this;
}

Process::~Process() {
  close_stdin();
  close_stdout();
  close_stderr();
}

void Process::close_stdin() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}
void Process::close_stdout() {
  if (out_ >= 0) ::close(out_);
  out_ = -1;
}
void Process::close_stderr() {
  if (err_ >= 0) ::close(err_);
  err_ = -1;
}

std::string Process::exec_error() const {
  if (exec_errno_ == 0) return "";
  if (failed_stage_ == kStageUser) {
    return "cannot run as user " + user_ + ": " + std::strerror(exec_errno_);
  }
  if (failed_stage_ == kStageChdir) {
    return "cannot change to directory '" + cwd_ + "': " + std::strerror(exec_errno_);
  }
  return "cannot execute '" + program_ + "': " + std::strerror(exec_errno_);
}

std::optional<ProcessExit> Process::poll() {
  if (exit_ || pid_ < 0) return exit_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_ = ProcessExit::from_wait_status(status);
  } else if (r < 0) {
    exit_ = ProcessExit::exited(70);  // not our child (any more): nothing to wait for
  }
  return exit_;
}

ProcessExit Process::wait() {
  if (exit_ || pid_ < 0) return exit_.value_or(ProcessExit::exited(70));
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  exit_ = r == pid_ ? ProcessExit::from_wait_status(status) : ProcessExit::exited(70);
  return *exit_;
}

void Process::signal_group(int sig) const {
  if (group_ > 0) {
    ::killpg(group_, sig);  // ESRCH: the group is gone, nothing to do
  } else if (pid_ > 0) {
    ::kill(pid_, sig);
  }
}

Process spawn(const SpawnOptions& o) {
  if (o.argv.empty()) throw Error(ExitStatus::software, "spawn: no program");
  std::vector<std::string> argv_store = o.argv;
  std::vector<std::pair<std::string, std::string>> env = o.env;
  const bool switching = o.account && o.account->uid != ::geteuid();
  if (o.account) {  // the account's, unless the caller sets them
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"HOME", o.account->home},
                               {"USER", o.account->name},
                               {"LOGNAME", o.account->name}}) {
      bool set = false;
      for (const auto& e : o.env) set = set || e.first == k;
      if (!set) env.emplace_back(k, v);
    }
  }
  std::vector<std::string> env_store = merged_environment(env);
  Fd child[3], parent[3];
  open_stream(o.in, true, child[0], parent[0]);
  open_stream(o.out, false, child[1], parent[1]);
  const bool shared = o.err.kind == o.out.kind && o.err.path == o.out.path &&
                      (o.err.kind == Stream::Kind::append || o.err.kind == Stream::Kind::truncate);
  if (shared) {
    child[2].reset(::fcntl(child[1].fd, F_DUPFD_CLOEXEC, 3));
    if (child[2].fd < 0) cannot_prepare(ExitStatus::unavailable, "cannot duplicate", errno);
  } else {
    open_stream(o.err, false, child[2], parent[2]);
  }
  int report_fds[2];
  if (::pipe2(report_fds, O_CLOEXEC) != 0) {
    cannot_prepare(ExitStatus::unavailable, "cannot create a pipe", errno);
  }
  Fd report_read(report_fds[0]), report_write(report_fds[1]);

  ChildPlan plan{&o,
                 ::getpid(),
                 {child[0].fd, child[1].fd, child[2].fd},
                 report_write.fd,
                 {},
                 c_strings(argv_store),
                 c_strings(env_store),
                 switching ? &*o.account : nullptr};
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);  // no handler of ours runs in the child
  plan.mask = o.blocked_signals ? signal_set(*o.blocked_signals) : old;
  pid_t pid = ::fork();
  if (pid == 0) run_child(plan);
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  report_write.reset();
  for (auto& c : child) c.reset();
  if (pid < 0) cannot_prepare(ExitStatus::unavailable, "cannot fork", fork_errno);

  Process p;
  p.program_ = o.argv.front();
  p.cwd_ = o.cwd;
  if (o.account) p.user_ = "'" + o.account->name + "' (uid " + std::to_string(o.account->uid) + ")";
  p.pid_ = pid;
  if (o.group == Group::own || (o.group == Group::join && o.join_group == 0)) {
    p.group_ = pid;
  } else if (o.group == Group::join) {
    p.group_ = o.join_group;
  }
  if (p.group_ > 0) ::setpgid(pid, p.group_);  // also here, so the group exists at once
  if (o.group == Group::detached) {
    pid_t grandchild = -1;
    bool got = read_full(report_read.fd, &grandchild, sizeof grandchild);
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!got || grandchild <= 0) {
      throw Error(ExitStatus::unavailable, "cannot start " + o.argv.front() + ": fork failed");
    }
    p.pid_ = grandchild;
  }
  ChildFailure failure{};
  if (read_full(report_read.fd, &failure, sizeof failure)) {
    p.exec_errno_ = failure.error;
    p.failed_stage_ = failure.stage;
  }
  p.in_ = parent[0].release();
  p.out_ = parent[1].release();
  p.err_ = parent[2].release();
  return p;
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ExitStatus::software, "cannot find the running program: " + ec.message());
  return p.string();
}

}  // namespace sia::os
