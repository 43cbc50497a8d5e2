// Safe file access where another user can change the names (lib/os): the one home of how a
// root process (sia-run's agent and supervisors, a controller fetching logs) opens, creates,
// reads, appends to and hands over files in a directory that a job's user owns -- its rank
// logs, its checkpoint directory -- without being led by that user to another file.
//
// The rule: the directory holding the file is opened once (open_dir: its own name must not
// be a symbolic link, and its parent is one that user cannot write, so the name cannot be
// swapped under us), and every file in it is reached relative to that descriptor (openat),
// one name at a time, with
//   - O_NOFOLLOW: a symbolic link planted at the name is refused, never followed;
//   - O_NONBLOCK at open: a FIFO planted at the name cannot hang the opener;
//   - fstat after open: only a regular file with exactly one link is used -- a hard link to
//     someone else's file (possible where fs.protected_hardlinks is 0) is refused;
//   - temporaries made with O_CREAT|O_EXCL under a random name, then renamed over the name
//     (renameat replaces a planted link itself, never what it points at);
//   - ownership and modes changed through the open descriptor (fchown, fchmod), never by
//     name, so what is changed is what was checked.
// A refusal is Error status 77 (permission denied) naming the path and why: "DIR/rank-0.log:
// refused: a symbolic link" (or "... not a regular file", "... has 2 hard links"). Thread-safety:
// functions of their arguments and the file system; an Fd is used from one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "os/account.hpp"

namespace sia::os {

// Modes of what sia keeps about jobs: readable by its owner only (item 6 of the threat
// model in sia-run(1), FILES): state files and logs, and their directories.
inline constexpr int kPrivateFile = 0600;
inline constexpr int kPrivateDir = 0700;
// A directory others pass through to what is theirs inside, listing nothing: a state
// directory above a job's own files.
inline constexpr int kTraverseDir = 0711;
// What a user asks a program to write (an output file): readable by others, as the umask
// allows.
inline constexpr int kPublicFile = 0644;

// An open file descriptor, closed when destroyed.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Opens the directory `path`. Its leading components are followed as they are (paths an
// administrator configured); its last must be a directory itself, not a symbolic link.
// Status 66 when it does not exist, 73 when it is a link or no directory.
Fd open_dir(const std::string& path);

enum class Access { read, append, read_write };

// Opens the regular file `name` in `dir` by the rule above. With `create` a missing file is
// made with exactly `mode`; without, a missing file is an empty Fd. `path` names it in
// messages.
Fd open_in(int dir, const std::string& name, Access access, bool create, int mode,
           const std::string& path);

// open_in on the directory holding `path` (open_dir) and its last name.
Fd open_file(const std::string& path, Access access, bool create = false, int mode = kPrivateFile);

// Replaces `name` in `dir` with `content` so that readers see the old file or the new one:
// a temporary ".NAME.tmp.RANDOM.PID" (O_EXCL) made with `mode` (less the umask: a 0600
// file is private whatever the umask), owned by `owner` when given (so that its owner can
// read it whatever the umask), written, fsynced, renamed over `name`, and the directory fsynced.
// Status 73 or 74.
void write_file_atomic_in(int dir, const std::string& name, std::string_view content, int mode,
                          const Account* owner, const std::string& path);

// Makes `account` the owner of `name` in `dir` (a directory, or a regular file with one
// link), and sets its mode to `mode` when one is given; a missing name is left alone (false).
bool give_in(int dir, const std::string& name, const Account& account, std::optional<int> mode,
             const std::string& path);
// The same for what `fd` has open (a directory, or a file open_in opened).
void give_fd(int fd, const Account& account, std::optional<int> mode, const std::string& path);

// Up to `max` bytes of `fd` from `offset` (pread, so the descriptor's position is unused).
std::string read_at(int fd, std::int64_t offset, std::int64_t max);
// The file's size (fstat).
std::int64_t file_size(int fd, const std::string& path);
// Appends all of `text` (write(2) until done; errors are ignored: logs are best effort).
void append_text(int fd, std::string_view text);

// Refuses (status 77, "PATH: refused: not a single file name") a `name` that is empty, "."
// or "..", or holds a '/': what is reached relative to a directory is one name in it.
void check_name(const std::string& name, const std::string& path);

// "DIR" and "NAME" of "DIR/NAME" ("." for a bare name).
std::pair<std::string, std::string> split_path(const std::string& path);

}  // namespace sia::os
