#include "os/safe_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "os/random_text.hpp"

namespace sia::os {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error(ExitStatus::no_perm, path + ": refused: " + why);
}

[[noreturn]] void fail(ExitStatus status, const std::string& path, const std::string& what,
                       int err) {
  throw Error(status, path + ": " + what + ": " + std::strerror(err));
}

// The reason `fd` (opened as `path`) may not be used as a job's file, "" when it may.
std::string why_not_regular(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_nlink != 1) return "has " + std::to_string(st.st_nlink) + " hard links";
  return "";
}

struct stat stat_of(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(ExitStatus::io, path, "cannot stat", errno);
  return st;
}

// O_NONBLOCK was only for the open: reads and writes of a regular file never block anyway,
// but the flag is cleared so that nothing depends on it.
void clear_nonblock(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

}  // namespace

void check_name(const std::string& name, const std::string& path) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    refuse(path, "not a single file name");
  }
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return {".", p};
  return {slash == 0 ? "/" : p.substr(0, slash), p.substr(slash + 1)};
}

Fd open_dir(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    const int err = errno;
    if (err == ENOENT) fail(ExitStatus::no_input, path, "cannot open", err);
    if (err == ELOOP || err == ENOTDIR) refuse(path, "not a directory (a symbolic link?)");
    fail(ExitStatus::cant_create, path, "cannot open", err);
  }
  return fd;
}

Fd open_in(int dir, const std::string& name, Access access, bool create, int mode,
           const std::string& path) {
  check_name(name, path);
  int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  flags |= access == Access::read     ? O_RDONLY
           : access == Access::append ? O_WRONLY | O_APPEND
                                      : O_RDWR;
  Fd fd;
  bool created = false;
  if (create) {
    // Created here or found: O_EXCL tells which, so a new file gets exactly `mode`.
    fd = Fd(::openat(dir, name.c_str(), flags | O_CREAT | O_EXCL, 0600));
    created = static_cast<bool>(fd);
    if (!fd && errno != EEXIST) fail(ExitStatus::cant_create, path, "cannot create", errno);
  }
  if (!fd) fd = Fd(::openat(dir, name.c_str(), flags));
  if (!fd) {
    const int err = errno;
    if (err == ENOENT && !create) return Fd();
    if (err == ELOOP) refuse(path, "a symbolic link");
    fail(create ? ExitStatus::cant_create : ExitStatus::no_input, path, "cannot open", err);
  }
  if (auto why = why_not_regular(stat_of(fd.get(), path)); !why.empty()) refuse(path, why);
  if (created && ::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) {
    fail(ExitStatus::cant_create, path, "cannot set its mode", errno);
  }
  clear_nonblock(fd.get());
  return fd;
}

Fd open_file(const std::string& path, Access access, bool create, int mode) {
  auto [dir, name] = split_path(path);
  Fd d = open_dir(dir);
  return open_in(d.get(), name, access, create, mode, path);
}

void write_file_atomic_in(int dir, const std::string& name, std::string_view content, int mode,
                          const Account* owner, const std::string& path) {
  check_name(name, path);
  std::string tmp;
  Fd fd;
  for (int attempt = 0; attempt < 100 && !fd; ++attempt) {
    // The writer's pid last: whoever cleans up can tell a dead writer's leftovers.
    tmp = "." + name + ".tmp." + random_text(8) + "." + std::to_string(::getpid());
    fd = Fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     static_cast<mode_t>(mode)));
    if (!fd && errno != EEXIST) fail(ExitStatus::cant_create, path, "cannot create", errno);
  }
  if (!fd) refuse(path, "no free temporary name");
  auto discard = [&](ExitStatus status, const std::string& what, int err) {
    ::unlinkat(dir, tmp.c_str(), 0);
    fail(status, path, what, err);
  };
  if (owner && ::fchown(fd.get(), owner->uid, owner->gid) != 0) {
    discard(ExitStatus::cant_create, "cannot give it to " + owner->name, errno);
  }
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      discard(ExitStatus::io, "write failed", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) discard(ExitStatus::io, "write failed", errno);
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    discard(ExitStatus::cant_create, "cannot replace", errno);
  }
  ::fsync(dir);
}

bool give_in(int dir, const std::string& name, const Account& account, std::optional<int> mode,
             const std::string& path) {
  check_name(name, path);
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return false;
    if (errno == ELOOP) refuse(path, "a symbolic link");
    fail(ExitStatus::cant_create, path, "cannot open", errno);
  }
  const struct stat st = stat_of(fd.get(), path);
  if (!S_ISDIR(st.st_mode)) {
    if (auto why = why_not_regular(st); !why.empty()) refuse(path, why);
  }
  give_fd(fd.get(), account, mode, path);
  return true;
}

void give_fd(int fd, const Account& account, std::optional<int> mode, const std::string& path) {
  if (::fchown(fd, account.uid, account.gid) != 0) {
    fail(ExitStatus::cant_create, path, "cannot give it to " + account.name, errno);
  }
  if (mode && ::fchmod(fd, static_cast<mode_t>(*mode)) != 0) {
    fail(ExitStatus::cant_create, path, "cannot set its mode", errno);
  }
}

std::string read_at(int fd, std::int64_t offset, std::int64_t max) {
  std::string out(static_cast<std::size_t>(std::max<std::int64_t>(max, 0)), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::pread(fd, out.data() + got, out.size() - got,
                        static_cast<off_t>(offset + static_cast<std::int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

std::int64_t file_size(int fd, const std::string& path) {
  return static_cast<std::int64_t>(stat_of(fd, path).st_size);
}

void append_text(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace sia::os
