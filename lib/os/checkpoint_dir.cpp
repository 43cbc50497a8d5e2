#include "os/checkpoint_dir.hpp"

#include <sys/file.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"
#include "os/make_dirs.hpp"

namespace sia::os {

namespace {

// The number the one-line file `name` in `dir` holds; nullopt when it is missing, refused
// (a link, not a regular file) or not a number.
std::optional<long> read_number(int dir, const std::string& name, const std::string& path) {
  std::string text;
  try {
    Fd fd = open_in(dir, name, Access::read, false, kPrivateFile, path);
    if (!fd) return std::nullopt;
    text = read_at(fd.get(), 0, 64);
  } catch (const Error&) {
    return std::nullopt;
  }
  text = text.substr(0, text.find('\n'));
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || errno == ERANGE || v < 0) return std::nullopt;
  return v;
}

std::optional<long> read_number(const std::string& dir, const std::string& name) {
  Fd d;
  try {
    d = open_dir(dir);
  } catch (const Error&) {
    return std::nullopt;
  }
  return read_number(d.get(), name, dir + "/" + name);
}

}  // namespace

CheckpointDirLock::CheckpointDirLock(const std::string& dir) {
  make_dirs(dir, kPrivateDir, kTraverseDir);  // its account passes through a checkpoint root
  dir_ = open_dir(dir);
  const std::string path = dir + "/.lock";
  lock_ = open_in(dir_.get(), ".lock", Access::read_write, true, kPrivateFile, path);
  while (::flock(lock_.get(), LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    throw Error(ExitStatus::cant_create, path + ": cannot lock: " + std::strerror(errno));
  }
}

long checkpoint_generation(const std::string& dir) {
  return read_number(dir, "generation").value_or(0);
}

void raise_checkpoint_generation(const std::string& dir, long generation) {
  CheckpointDirLock lock(dir);
  const std::string path = dir + "/generation";
  if (read_number(lock.dir(), "generation", path).value_or(0) >= generation) return;
  write_file_atomic_in(lock.dir(), "generation", std::to_string(generation) + "\n", kPublicFile,
                       nullptr, path);
}

void check_checkpoint_generation(const std::string& dir, long generation) {
  if (generation <= 0) return;
  const long newest = checkpoint_generation(dir);
  if (newest > generation) {
    throw Error(ExitStatus::temp_fail, dir + ": generation " + std::to_string(newest) +
                                           " of this job has started; " +
                                           "this writer (generation " + std::to_string(generation) +
                                           ") is stale and leaves the checkpoints alone");
  }
}

void mark_checkpoint_finished(const std::string& dir, long generation) {
  CheckpointDirLock lock(dir);
  write_file_atomic_in(lock.dir(), "finished", std::to_string(generation) + "\n", kPublicFile,
                       nullptr, dir + "/finished");
}

std::optional<long> checkpoint_finished(const std::string& dir) {
  return read_number(dir, "finished");
}

}  // namespace sia::os
