#include "os/remove_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "os/safe_open.hpp"

namespace sia::os {

namespace {

// Tries at one name before giving up on a user who keeps changing it.
constexpr int kTries = 3;

[[noreturn]] void cannot(const std::string& path, const std::string& what, int err) {
  throw Error(ExitStatus::io, path + ": " + what + ": " + std::strerror(err));
}

// The names in the directory open as `dir`, but "." and "..".
std::vector<std::string> names_in(int dir, const std::string& path) {
  // fdopendir takes the descriptor it is given: a copy, which shares the offset (rewound).
  const int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) cannot(path, "cannot list", errno);
  DIR* d = ::fdopendir(copy);
  if (!d) {
    const int err = errno;
    ::close(copy);
    cannot(path, "cannot list", err);
  }
  ::rewinddir(d);
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) cannot(path, "cannot list", err);
  return names;
}

// Removes `name` in `parent`, `level` levels below the tree's top (the top is 0).
bool remove_entry(int parent, const std::string& name, const std::string& path, int level,
                  int max_depth) {
  for (int attempt = 1;; ++attempt) {
    // A directory is opened as one, never through a link: O_NOFOLLOW fails on a link,
    // O_DIRECTORY on anything else before it is opened (a FIFO cannot hang us).
    Fd dir(::openat(parent, name.c_str(),
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!dir) {
      const int err = errno;
      if (err == ENOENT) return false;
      if (err != ELOOP && err != ENOTDIR) cannot(path, "cannot open", err);
      // No directory (a link among them): the name itself goes.
      if (::unlinkat(parent, name.c_str(), 0) == 0) return true;
      if (errno == ENOENT) return false;
      if (errno == EISDIR && attempt < kTries) continue;  // made a directory meanwhile
      cannot(path, "cannot remove", errno);
    }
    if (level >= max_depth) {
      throw Error(ExitStatus::no_perm,
                  path + ": refused: deeper than " + std::to_string(max_depth) + " levels");
    }
    for (const auto& n : names_in(dir.get(), path)) {
      remove_entry(dir.get(), n, path + "/" + n, level + 1, max_depth);
    }
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0) return true;
    const int err = errno;
    if (err == ENOENT) return true;
    // Written to meanwhile (its user is still at it), or replaced: once more from the top.
    if ((err == ENOTEMPTY || err == EEXIST || err == ENOTDIR) && attempt < kTries) continue;
    cannot(path, "cannot remove", err);
  }
}

}  // namespace

bool remove_tree_in(int parent, const std::string& name, const std::string& path, int max_depth) {
  check_name(name, path);
  return remove_entry(parent, name, path, 0, max_depth);
}

bool remove_tree(const std::string& path, int max_depth) {
  auto [dir, name] = split_path(path);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) return false;
  Fd d = open_dir(dir);
  return remove_tree_in(d.get(), name, path, max_depth);
}

}  // namespace sia::os
