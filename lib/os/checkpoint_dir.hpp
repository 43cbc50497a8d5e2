// The files sia-run and a job's checkpoint writers share in a job's checkpoint directory
// (SIA_CKPT_DIR), beside the checkpoints and `latest` (sia-formats(5), CHECKPOINT
// DIRECTORY). They fence out a stale generation and remember that a job finished:
//   generation  one line, the newest generation (SIA_ROUND) sia-run started on the job;
//               only ever raised. A writer of an older generation must not move `latest`
//               or remove checkpoints (check_generation under the directory's lock).
//   finished    one line, the generation whose ranks all exited 0. A job whose directory
//               has it is not started again, on this node or any other sharing it.
//   .lock       flock(2)ed while `generation` is raised and while a writer checks it and
//               moves `latest`, so a check and the move it guards are one step.
// The directory belongs to the job's user, and sia-run (root) works in it too: every file
// in it is reached by safe_open.hpp's rule (the directory opened once without following a
// link, each file by openat, O_NOFOLLOW, one hard link), so that a link the job planted at
// .lock, generation, finished or a temporary name is never followed: a refused .lock is an
// error, a refused generation or finished reads as absent (and is replaced by a rename).
// Errors: status 73 when the directory or a file cannot be created or written (or is
// refused), 75 from check_generation when a newer generation has started.
// Thread-safety: processes exclude each other through the lock; one CheckpointDirLock per
// thread and directory.
#pragma once

#include <optional>
#include <string>

#include "os/safe_open.hpp"

namespace sia::os {

// Holds DIR/.lock (waiting for it) from construction to destruction; creates DIR (0700; its
// missing parents 0711) and .lock (0600).
class CheckpointDirLock {
 public:
  explicit CheckpointDirLock(const std::string& dir);
  CheckpointDirLock(const CheckpointDirLock&) = delete;
  CheckpointDirLock& operator=(const CheckpointDirLock&) = delete;

  int dir() const { return dir_.get(); }  // the directory, opened once

 private:
  Fd dir_;
  Fd lock_;  // closing it releases the flock
};

// The generation DIR/generation names; 0 without one (or an unreadable one).
long checkpoint_generation(const std::string& dir);
// Raises DIR/generation to `generation` (takes the lock); never lowers it.
void raise_checkpoint_generation(const std::string& dir, long generation);
// Status 75 unless `generation` is at least DIR/generation's (call it holding the lock).
// Generation 0 (a writer sia-run did not start) is never fenced.
void check_checkpoint_generation(const std::string& dir, long generation);

// Records that `generation` finished; the generation that did, if one has.
void mark_checkpoint_finished(const std::string& dir, long generation);
std::optional<long> checkpoint_finished(const std::string& dir);

}  // namespace sia::os
