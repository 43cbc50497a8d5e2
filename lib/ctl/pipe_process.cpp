#include "ctl/pipe_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

extern char** environ;
#include "exec/spawn.hpp"

namespace sia::ctl {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void set_nonblock(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

// write(2) to a pipe whose reader may be gone, without a SIGPIPE for the process (whose
// disposition a library must not assume): the signal is blocked in this thread for the
// call, and one it raised is taken before unblocking. EPIPE is returned as usual.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = ::write(fd, data, size);
  const int saved = errno;
  if (w < 0 && saved == EPIPE && !was_pending) {
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

}  // namespace

std::string resolve_program(const std::string& program) {
  if (program.empty() || program.find('/') != std::string::npos) return program;
  try {
    std::filesystem::path self(exec::self_executable());
    std::filesystem::path beside = self.parent_path() / program;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  } catch (const std::exception&) {
  }
  return program;
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t nl = text.rfind('\n', end - 1);
    std::size_t start = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    if (nl == std::string::npos) break;
    end = nl;
  }
  return "";
}

PipedResult run_piped(const std::vector<std::string>& argv, const std::string& input,
                      double timeout, const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) throw Error(ExitStatus::software, "run_piped: no program");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw Error(ExitStatus::unavailable,
                std::string("cannot create pipes: ") + std::strerror(errno));
  }
  // Everything the child needs is made here: after fork() it only makes system calls
  // (the driver runs several nodes' commands from threads at once).
  std::vector<std::string> args = argv;
  args[0] = resolve_program(args[0]);
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : env) replaced = replaced || kv.rfind(k + "=", 0) == 0;
    if (!replaced) envs.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> cenv;
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const std::string exec_error = args[0] + ": cannot execute\n";
  const pid_t parent = ::getpid();
  const double t0 = now_s();
  pid_t pid = ::fork();
  if (pid < 0) {
    throw Error(ExitStatus::unavailable, std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    [[maybe_unused]] ssize_t n = ::write(2, exec_error.data(), exec_error.size());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  set_nonblock(in[1]);
  set_nonblock(out[0]);
  set_nonblock(err[0]);
  PipedResult r;
  std::size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  int out_fd = out[0], err_fd = err[0];
  bool term_sent = false;
  double kill_at = 0;
  bool reaped = false;
  int status = 0;
  double reaped_at = 0;
  char buf[65536];
  while (out_fd >= 0 || err_fd >= 0) {
    pollfd fds[3];
    int n = 0;
    if (in_fd >= 0) fds[n++] = {in_fd, POLLOUT, 0};
    if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
    int rc = ::poll(fds, static_cast<nfds_t>(n), 100);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < n && rc > 0; ++i) {
      if (!fds[i].revents) continue;
      int fd = fds[i].fd;
      if (fd == in_fd) {
        ssize_t w = write_no_sigpipe(in_fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size() ||
            (fds[i].revents & (POLLERR | POLLHUP))) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got > 0) {
        (fd == out_fd ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        ::close(fd);
        (fd == out_fd ? out_fd : err_fd) = -1;
      }
    }
    const double now = now_s();
    if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      reaped_at = now;
    }
    // A grandchild that kept our pipes open must not hold us up once the child is gone.
    if (reaped && now - reaped_at > 2) break;
    if (!reaped && timeout > 0 && !term_sent && now - t0 > timeout) {
      r.timed_out = true;
      term_sent = true;
      ::kill(-pid, SIGTERM);
      kill_at = now + 5;
    }
    if (term_sent && kill_at > 0 && now > kill_at) {
      ::kill(-pid, SIGKILL);
      kill_at = 0;
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  if (out_fd >= 0) ::close(out_fd);
  if (err_fd >= 0) ::close(err_fd);
  while (!reaped && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = now_s() - t0;
  r.status =
      WIFEXITED(status) ? WEXITSTATUS(status) : (WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 70);
  return r;
}

}  // namespace sia::ctl
