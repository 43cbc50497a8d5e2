#include "channel/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

extern char** environ;

namespace sia::channel {

namespace {

int decode_status(int raw) {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return 70;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_file,
                           const std::string& stderr_file) {
  if (argv.empty()) throw Error(ExitStatus::software, "ChildProcess: empty argv");
  if (::access(argv[0].c_str(), X_OK) != 0) {
    throw Error(ExitStatus::unavailable, "cannot run " + argv[0] + ": " + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGHUP);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = ::posix_spawn(&pid_, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw Error(ExitStatus::unavailable, "cannot run " + argv[0] + ": " + std::strerror(rc));
  }
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ < 0) return status_;
  int raw = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &raw, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    status_ = decode_status(raw);
  } else if (r < 0) {
    status_ = 70;  // not our child any more (reaped elsewhere): nothing to wait for
  }
  return status_;
}

int ChildProcess::wait() {
  if (status_ || pid_ < 0) return status_.value_or(70);
  int raw = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &raw, 0);
  } while (r < 0 && errno == EINTR);
  status_ = r == pid_ ? decode_status(raw) : 70;
  return *status_;
}

}  // namespace sia::channel
