// LocalLauncher with real processes (/bin/sh scripts); each case takes well under a second.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "exec/local_launcher.hpp"
#include "next_exit.hpp"
#include "temp_dir.hpp"

using namespace sia::exec;
using sia::exec::test::next_exit;
using sia::exec::test::slurp;
using sia::exec::test::TempDir;

namespace {

RankCommand sh(int rank, const std::string& script, const std::string& log) {
  RankCommand c;
  c.rank = rank;
  c.argv = {"/bin/sh", "-c", script};
  c.log = log;
  c.header = "header of rank " + std::to_string(rank);
  return c;
}

}  // namespace

TEST_CASE("a rank runs with its environment and directory, its output in its log", "[launcher]") {
  TempDir tmp;
  LocalLauncher l;
  RankCommand c = sh(1, "echo \"$RANK $FOO $(pwd)\"; echo oops >&2; exit 3", tmp / "logs/r1.log");
  c.env = {{"RANK", "1"}, {"FOO", "bar"}};
  c.cwd = tmp.path();
  StartResult r = l.start(c);
  REQUIRE(r.pid > 0);
  CHECK(r.error.empty());
  CHECK(l.group() == r.pid);
  WaitEvent ev = next_exit(l);
  CHECK(ev.pid == r.pid);
  CHECK(ev.exit == ProcessExit::exited(3));
  std::string log = slurp(tmp / "logs/r1.log");
  CHECK(log == "header of rank 1\n1 bar " + tmp.path() + "\noops\nsia-run: rank 1 (pid " +
                   std::to_string(r.pid) + ") ended: exit status 3\n");
  // The log is appended to, never truncated.
  c.header = "again";
  l.start(c);
  next_exit(l);
  CHECK(slurp(tmp / "logs/r1.log").rfind(log + "again\n", 0) == 0);
}

TEST_CASE("a program that cannot be executed ends with 127 and says why", "[launcher]") {
  TempDir tmp;
  LocalLauncher l;
  RankCommand c;
  c.argv = {"/nonexistent/train"};
  c.log = tmp / "r0.log";
  StartResult r = l.start(c);
  CHECK(r.pid > 0);
  CHECK(r.error == "cannot execute '/nonexistent/train': No such file or directory");
  CHECK(next_exit(l).exit == ProcessExit::exited(127));
  CHECK(slurp(c.log).find("sia-run: cannot execute '/nonexistent/train'") != std::string::npos);
}

TEST_CASE("ranks share one process group that signal_all reaches", "[launcher]") {
  TempDir tmp;
  LocalLauncher l;
  const std::string loop = "trap 'exit 75' TERM; echo up; while :; do sleep 0.05; done";
  StartResult a = l.start(sh(0, loop, tmp / "r0.log"));
  StartResult b = l.start(sh(1, loop, tmp / "r1.log"));
  CHECK(::getpgid(a.pid) == a.pid);
  CHECK(::getpgid(b.pid) == a.pid);
  CHECK(::getpgid(0) != a.pid);
  // Wait until both shells have set their trap.
  for (int i = 0; i < 200; ++i) {
    if (slurp(tmp / "r0.log").find("up") != std::string::npos &&
        slurp(tmp / "r1.log").find("up") != std::string::npos) {
      break;
    }
    ::usleep(10000);
  }
  CHECK(l.wait(std::chrono::milliseconds(50)).kind == WaitEvent::Kind::timeout);
  l.signal_all(SIGTERM);
  CHECK(next_exit(l).exit == ProcessExit::exited(75));
  CHECK(next_exit(l).exit == ProcessExit::exited(75));
}

TEST_CASE("a termination signal to the supervisor is an interruption", "[launcher]") {
  LocalLauncher l;
  ::kill(::getpid(), SIGTERM);  // blocked: pending until wait() takes it
  WaitEvent ev = l.wait(std::chrono::milliseconds(1000));
  CHECK(ev.kind == WaitEvent::Kind::interrupted);
  CHECK(ev.signal == SIGTERM);
  CHECK(is_stop_signal(SIGHUP));
  CHECK_FALSE(is_stop_signal(SIGCHLD));
}
