#include "os/lock_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "os/make_dirs.hpp"

namespace sia::os {

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

LockAttempt try_lock_file(const std::string& path, const std::string& holder) {
  make_dirs(std::filesystem::path(path).parent_path().string());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFile);
  if (fd < 0) throw Error(ExitStatus::cant_create, path + ": cannot open: " + std::strerror(errno));
  LockAttempt a;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[128] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK)
      throw Error(ExitStatus::io, path + ": cannot lock: " + std::strerror(err));
    a.holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
    while (!a.holder.empty() && (a.holder.back() == '\n' || a.holder.back() == ' ')) {
      a.holder.pop_back();
    }
    return a;
  }
  std::string text = holder + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
  }
  a.lock.emplace(fd);
  return a;
}

}  // namespace sia::os
