#include "core/checkpoint_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace sia {

namespace fs = std::filesystem;

namespace {

// The number a one-line file holds; nullopt when it is missing or not a number.
std::optional<long> read_number(const fs::path& path) {
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || errno == ERANGE || v < 0) return std::nullopt;
  return v;
}

}  // namespace

CheckpointDirLock::CheckpointDirLock(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = (fs::path(dir) / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ExitStatus::cant_create, path + ": " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd_);
    throw Error(ExitStatus::cant_create, path + ": cannot lock: " + std::strerror(e));
  }
}

CheckpointDirLock::~CheckpointDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

long checkpoint_generation(const std::string& dir) {
  return read_number(fs::path(dir) / "generation").value_or(0);
}

void raise_checkpoint_generation(const std::string& dir, long generation) {
  CheckpointDirLock lock(dir);
  if (checkpoint_generation(dir) >= generation) return;
  write_file_atomic((fs::path(dir) / "generation").string(), std::to_string(generation) + "\n");
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
  write_file_atomic((fs::path(dir) / "finished").string(), std::to_string(generation) + "\n");
}

std::optional<long> checkpoint_finished(const std::string& dir) {
  return read_number(fs::path(dir) / "finished");
}

}  // namespace sia
