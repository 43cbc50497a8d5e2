#include "exec/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace sia::exec {

namespace {

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

void write_full(int fd, const void* buf, std::size_t n) {
  [[maybe_unused]] ssize_t r = ::write(fd, buf, n);  // a pipe: small writes are atomic
}

}  // namespace

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ExitStatus::software, "cannot find the running program: " + ec.message());
  return p.string();
}

pid_t spawn_helper(const std::vector<std::string>& argv_in, const std::string& log, bool detached) {
  std::vector<std::string> store = argv_in;
  std::vector<char*> argv;
  for (auto& s : store) argv.push_back(s.data());
  argv.push_back(nullptr);
  int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fds[2];
  if (out < 0 || in < 0 || ::pipe2(fds, O_CLOEXEC) != 0) {
    int err = errno;
    if (out >= 0) ::close(out);
    if (in >= 0) ::close(in);
    throw Error(ExitStatus::unavailable,
                log + ": cannot start a supervisor: " + std::strerror(err));
  }
  sigset_t block, old;
  sigemptyset(&block);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&block, s);
  ::sigprocmask(SIG_BLOCK, &block, &old);
  const pid_t parent = ::getpid();

  // The child (and, detached, the grandchild) reports through the pipe: the grandchild's
  // pid, then an errno if exec fails. EOF after the pid means exec succeeded.
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (detached) {
      ::setsid();
      pid_t grandchild = ::fork();
      if (grandchild != 0) {
        write_full(fds[1], &grandchild, sizeof grandchild);
        ::_exit(grandchild < 0 ? 1 : 0);
      }
    } else {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
      pid_t self = ::getpid();
      write_full(fds[1], &self, sizeof self);
    }
    ::execv(argv[0], argv.data());
    int err = errno;
    write_full(fds[1], &err, sizeof err);
    ::_exit(127);
  }
  int fork_err = errno;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(fds[1]);
  ::close(in);
  ::close(out);
  if (pid < 0) {
    ::close(fds[0]);
    throw Error(ExitStatus::unavailable,
                std::string("cannot start a supervisor: fork: ") + std::strerror(fork_err));
  }
  pid_t helper = -1;
  int exec_err = 0;
  bool got_pid = read_full(fds[0], &helper, sizeof helper);
  bool failed = got_pid && read_full(fds[0], &exec_err, sizeof exec_err);
  ::close(fds[0]);
  if (detached) {
    int st = 0;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  if (!got_pid || helper <= 0) {
    throw Error(ExitStatus::unavailable, "cannot start a supervisor: fork failed");
  }
  if (failed) {
    throw Error(ExitStatus::unavailable,
                "cannot execute " + argv_in.front() + ": " + std::strerror(exec_err));
  }
  return helper;
}

}  // namespace sia::exec
