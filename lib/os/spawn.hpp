// spawn: the one way library code starts a program (lib/os, the operating-system layer;
// run_process.hpp runs one to completion on top of it). What it promises:
//   - everything the child needs (argv, environment, open files, pipes) is prepared before
//     fork(); between fork() and exec the child makes system calls only, so spawn is safe
//     from a multi-threaded process (the controller runs several nodes' commands at once);
//   - the caller's signal mask is left as it was, and no signal handler of the caller runs
//     in the child (all signals are blocked across fork());
//   - the child's standard streams are /dev/null, a file (appended or truncated), a pipe
//     to the caller, or the caller's own; every other descriptor spawn opens is close-on-
//     exec, so nothing leaks into other children;
//   - with an account (SpawnOptions::account) the child takes that user's groups, group
//     and user id (setgroups, setgid, setuid, each checked, and a setuid(0) that must then
//     fail) before anything else it does as the program's user, and HOME, USER and LOGNAME
//     are the account's; the caller must be root unless it already runs as that user;
//   - it returns only once the program is executing, or says why it could not be: a
//     user that cannot be switched to, a directory that cannot be entered or a program
//     that cannot be executed is reported (exec_error()), and that child ends at once with
//     status 127 (ENOENT) or 126 -- it is still the caller's child to reap.
// What fails to be prepared (a log that cannot be opened, no pipe, no fork) is thrown as
// sia::Error with status 69 (unavailable) or 73 (cannot create).
// Thread-safety: spawn() may be called from several threads at once; a Process is used
// from one thread. Destroying a Process closes its pipes but neither stops nor reaps the
// program.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "os/account.hpp"
#include "os/process_exit.hpp"

namespace sia::os {

// Where one of the child's standard streams goes.
struct Stream {
  enum class Kind { inherit, null, pipe, append, truncate, descriptor };
  Kind kind = Kind::inherit;
  std::string path;  // append, truncate: the file (created with mode 0600)
  int fd = -1;       // descriptor: a file the caller opened (and still owns; spawn dups it)

  static Stream inherit() { return {}; }
  static Stream null() { return {Kind::null, {}, -1}; }
  static Stream pipe() { return {Kind::pipe, {}, -1}; }
  static Stream append_to(std::string path) { return {Kind::append, std::move(path), -1}; }
  static Stream truncate(std::string path) { return {Kind::truncate, std::move(path), -1}; }
  // A file opened safely beforehand (os/safe_open.hpp): what a root caller gives a job's
  // program when the file lies in a directory that program's user owns.
  static Stream descriptor(int fd) { return {Kind::descriptor, {}, fd}; }
};

// The child's process group.
enum class Group {
  inherit,  // the caller's
  own,      // a new group that the child leads (a terminal's ^C reaches the caller only)
  join,     // SpawnOptions::join_group (0: a new one, as `own`)
  detached  // a new session, re-parented to init by a double fork: it outlives the caller
            // and is not the caller's child (it cannot be waited for)
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  bool search_path = true;        // false: argv[0] is used as it is
  std::vector<std::pair<std::string, std::string>> env;  // set (or replaced) on top of ours
  std::string cwd;                                       // "": the caller's
  Stream in = Stream::null();
  Stream out = Stream::inherit();
  Stream err = Stream::inherit();  // the same file as `out` shares one descriptor
  Group group = Group::own;
  pid_t join_group = 0;
  // Sent to the child when the caller dies (PR_SET_PDEATHSIG); 0: none. When the caller is
  // already gone by the time the child sets it, the child exits with status 127.
  int parent_death_signal = 0;
  // Signals reset to the default disposition in the child (an ignored signal stays ignored
  // across exec otherwise); all_signals_default resets every one.
  std::vector<int> default_signals;
  bool all_signals_default = false;
  // The child's signal mask; nullopt: the caller's.
  std::optional<std::vector<int>> blocked_signals;
  // The user the program runs as; nullopt: the caller's. Its files (`out`, `err`) are
  // opened by the caller, before the switch.
  std::optional<Account> account;
};

class Process {
 public:
  Process() = default;
  Process(Process&& o) noexcept;
  Process& operator=(Process&& o) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  // The errno of a failed user switch, chdir or exec (0: the program runs) and the
  // message for it: "cannot run as user 'alice' (uid 1001): ...", "cannot change to
  // directory 'DIR': ..." or "cannot execute 'PROGRAM': ...".
  int exec_errno() const { return exec_errno_; }
  std::string exec_error() const;

  // The caller's ends of the pipes (Stream::pipe), -1 otherwise; owned by the Process.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_; }
  int stderr_fd() const { return err_; }
  void close_stdin();
  void close_stdout();
  void close_stderr();

  // How the program ended, without blocking: nullopt while it runs. A child reaped by
  // someone else (waitpid fails) reads as exit status 70 (EX_SOFTWARE).
  std::optional<ProcessExit> poll();
  // Blocks until it ends (same rule).
  ProcessExit wait();
  // Sends `sig` to the program's process group (Group::own or join), or to the program.
  void signal_group(int sig) const;

 private:
  friend Process spawn(const SpawnOptions& options);
  pid_t pid_ = -1;
  pid_t group_ = 0;
  int exec_errno_ = 0;
  int failed_stage_ = 0;
  std::string program_, cwd_, user_;
  int in_ = -1, out_ = -1, err_ = -1;
  std::optional<ProcessExit> exit_;
};

Process spawn(const SpawnOptions& options);

// The running program's own path (/proc/self/exe), to start helpers from the same binary.
std::string self_executable();

}  // namespace sia::os
