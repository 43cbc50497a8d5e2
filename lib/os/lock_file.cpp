#include "os/lock_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
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

namespace {

int open_lock_file(const std::string& path) {
  make_dirs(std::filesystem::path(path).parent_path().string());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, kPrivateFile);
  if (fd < 0) throw Error(ExitStatus::cant_create, path + ": cannot open: " + std::strerror(errno));
  return fd;
}

FileLock held_by(int fd, const std::string& holder) {
  std::string text = holder + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd, text.data(), text.size(), 0);
  }
  return FileLock(fd);
}

}  // namespace

LockAttempt try_lock_file(const std::string& path, const std::string& holder) {
  int fd = open_lock_file(path);
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
  a.lock.emplace(held_by(fd, holder));
  return a;
}

FileLock wait_lock_file(const std::string& path, const std::string& holder) {
  for (;;) {
    int fd = open_lock_file(path);
    int rc;
    while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      int err = errno;
      ::close(fd);
      throw Error(ExitStatus::io, path + ": cannot lock: " + std::strerror(err));
    }
    // The holder before may have removed the file (a refused submission removes the
    // directory it made for its lock, ctl/client_backend.cpp): the lock is ours
    // only while the path still names the file locked; otherwise again.
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return held_by(fd, holder);
    }
    ::close(fd);
  }
}

}  // namespace sia::os
