// Lock files (lib/os): an exclusive flock(2) on a file that also says who holds it -- how
// one sia-run state directory and one controller state directory admit one writer at a
// time. try_lock_file() creates the file's directory and the file if needed, never waits,
// and on success writes `holder` (a line: "<pid>" or "<pid> (<what>)") into the file for
// the next one to read. wait_lock_file() is the same but waits for the holder to let go
// (a short critical section: sia-ctl submit's admission, ctl/admission_lock.hpp). Neither
// follows a symbolic link at the file. The lock is released when the FileLock is destroyed
// or the process ends (a crash never leaves a stale lock).
// Errors: status 73 when the directory or file cannot be created, 74 when flock fails for
// another reason than a holder.
// Thread-safety: flock locks belong to the open file: two FileLocks on one path in one
// process exclude each other too. A FileLock is used from one thread.
#pragma once

#include <optional>
#include <string>

namespace sia::os {

class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {}
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  int fd_;
};

struct LockAttempt {
  std::optional<FileLock> lock;  // held: the lock
  std::string holder;            // not held: what the holder wrote, trailing blanks cut
};

LockAttempt try_lock_file(const std::string& path, const std::string& holder);
FileLock wait_lock_file(const std::string& path, const std::string& holder);

}  // namespace sia::os
