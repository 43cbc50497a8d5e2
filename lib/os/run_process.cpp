#include "os/run_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "os/clock.hpp"

namespace sia::os {

namespace {

void set_nonblock(int fd) {
  if (fd < 0) return;
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

// Moves what is ready on the pipes: input to the program, its output to `r`.
void pump(Process& p, const std::string& input, std::size_t& written, std::size_t max_out,
          RunResult& r) {
  pollfd fds[3];
  int n = 0;
  if (p.stdin_fd() >= 0) fds[n++] = {p.stdin_fd(), POLLOUT, 0};
  if (p.stdout_fd() >= 0) fds[n++] = {p.stdout_fd(), POLLIN, 0};
  if (p.stderr_fd() >= 0) fds[n++] = {p.stderr_fd(), POLLIN, 0};
  int rc = ::poll(fds, static_cast<nfds_t>(n), 100);
  char buf[65536];
  for (int i = 0; i < n && rc > 0; ++i) {
    if (!fds[i].revents) continue;
    const int fd = fds[i].fd;
    if (fd == p.stdin_fd()) {
      ssize_t w = write_no_sigpipe(fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size() ||
          (fds[i].revents & (POLLERR | POLLHUP))) {
        p.close_stdin();
      }
      continue;
    }
    const bool is_out = fd == p.stdout_fd();
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got > 0) {
      std::string& to = is_out ? r.out : r.err;
      std::size_t take = static_cast<std::size_t>(got);
      if (max_out > 0 && to.size() + take > max_out) {
        take = max_out - to.size();
        if (is_out) {
          r.out_overflow = true;
          p.close_stdout();
        }
      }
      to.append(buf, take);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      is_out ? p.close_stdout() : p.close_stderr();
    }
  }
}

}  // namespace

RunResult run_process(const SpawnOptions& options, const std::string& input, double timeout,
                      double kill_grace, std::size_t max_out) {
  Clock& clock = system_clock();
  const Clock::TimePoint t0 = clock.now();
  Process p = spawn(options);
  RunResult r;
  r.exec_errno = p.exec_errno();
  r.exec_error = p.exec_error();
  if (input.empty()) p.close_stdin();
  set_nonblock(p.stdin_fd());
  set_nonblock(p.stdout_fd());
  set_nonblock(p.stderr_fd());
  std::size_t written = 0;
  std::optional<ProcessExit> ended;
  Clock::TimePoint ended_at{};
  Clock::TimePoint kill_at = Clock::TimePoint::max();  // when SIGKILL is due
  bool stopping = false;  // SIGTERM sent (timed out, or too much output)
  for (;;) {
    if (p.stdin_fd() >= 0 || p.stdout_fd() >= 0 || p.stderr_fd() >= 0) {
      pump(p, input, written, max_out, r);
    } else {
      clock.sleep_for(std::chrono::milliseconds(5));
    }
    const Clock::TimePoint now = clock.now();
    if (!ended && (ended = p.poll())) ended_at = now;
    // A grandchild that kept the pipes open must not hold us up once the program is gone.
    if (ended && ((p.stdout_fd() < 0 && p.stderr_fd() < 0) || now - ended_at > span(2))) break;
    const bool over_time = timeout > 0 && !r.timed_out && now - t0 > span(timeout);
    if (!ended && !stopping && (over_time || r.out_overflow)) {
      r.timed_out = over_time;
      stopping = true;
      p.signal_group(SIGTERM);
      kill_at = now + span(kill_grace);
    } else if (now > kill_at) {
      p.signal_group(SIGKILL);
      kill_at = Clock::TimePoint::max();
    }
  }
  if (stopping) p.signal_group(SIGKILL);  // whatever the program left behind
  r.exit = *ended;
  r.seconds = to_seconds(clock.now() - t0);
  return r;
}

}  // namespace sia::os
