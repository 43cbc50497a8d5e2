#include "worker/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/error.hpp"

namespace sia::worker {

namespace {

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void child(const Subprocess& p, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent is already gone
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) ::dup2(in, 0);
  if (!p.log_path.empty()) {
    int out = ::open(p.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out < 0) ::_exit(127);
    ::dup2(out, 1);
    ::dup2(out, 2);
  }
  signal(SIGPIPE, SIG_DFL);
  for (const auto& [k, v] : p.env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::string msg = "exec " + p.argv[0] + ": " + std::strerror(errno) + "\n";
  (void)!::write(2, msg.data(), msg.size());
  ::_exit(127);
}

}  // namespace

ExitInfo run_subprocess(const Subprocess& p) {
  if (p.argv.empty()) throw Error(ExitStatus::usage, "no command to run");
  const pid_t parent = ::getpid();
  const double start = now_s();
  pid_t pid = ::fork();
  if (pid < 0) throw Error(ExitStatus::unavailable, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) child(p, parent);
  ::setpgid(pid, pid);  // also from here, so the group exists before any kill
  ExitInfo info;
  double term_at = 0;
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      throw Error(ExitStatus::software, std::string("waitpid: ") + std::strerror(errno));
    }
    const double t = now_s() - start;
    if (p.timeout > 0 && t > p.timeout && term_at == 0) {
      info.timed_out = true;
      ::kill(-pid, SIGTERM);
      term_at = t;
    } else if (term_at > 0 && t > term_at + 10) {
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (info.timed_out) ::kill(-pid, SIGKILL);  // whatever the worker left behind
  info.seconds = now_s() - start;
  info.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return info;
}

std::string tail_of_file(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > static_cast<std::size_t>(lines) ? all.size() - lines : 0;
       i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

}  // namespace sia::worker
