#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "exec/temp_dir.hpp"
#include "os/spawn.hpp"

using namespace sia::os;
using sia::exec::test::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SpawnOptions shell(const std::string& script) {
  SpawnOptions o;
  o.argv = {"sh", "-c", script};
  return o;
}

}  // namespace

TEST_CASE("spawn runs a program with its environment, directory and log", "[os][spawn]") {
  TempDir tmp;
  SpawnOptions o = shell("echo \"$SIA_X $(pwd)\"; echo oops >&2; exit 3");
  o.env = {{"SIA_X", "42"}, {"HOME", "/nowhere"}};
  o.cwd = tmp.path();
  o.out = o.err = Stream::append_to(tmp / "log");
  Process p = spawn(o);
  CHECK(p.pid() > 0);
  CHECK(p.exec_errno() == 0);
  CHECK(p.exec_error().empty());
  CHECK(p.wait() == ProcessExit::exited(3));
  CHECK(p.poll() == ProcessExit::exited(3));  // once ended, it stays so
  CHECK(slurp(tmp / "log") == "42 " + tmp.path() + "\noops\n");

  // Appended, not truncated; stderr to its own truncated file.
  o = shell("echo again; echo err >&2");
  o.out = Stream::append_to(tmp / "log");
  o.err = Stream::truncate(tmp / "err");
  std::ofstream(tmp / "err") << "old\n";
  CHECK(spawn(o).wait().success());
  CHECK(slurp(tmp / "log") == "42 " + tmp.path() + "\noops\nagain\n");
  CHECK(slurp(tmp / "err") == "err\n");
}

TEST_CASE("spawn says why a program could not be executed", "[os][spawn]") {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  Process p = spawn(o);
  CHECK(p.exec_errno() == ENOENT);
  CHECK(p.exec_error() == "cannot execute '/nonexistent/program': No such file or directory");
  CHECK(p.wait() == ProcessExit::exited(127));

  TempDir tmp;
  o = shell("true");
  o.cwd = tmp / "missing";
  p = spawn(o);
  CHECK(p.exec_error() ==
        "cannot change to directory '" + tmp.path() + "/missing': No such file or directory");
  CHECK(p.wait() == ProcessExit::exited(127));

  // A log that cannot be opened is the caller's error, before anything runs.
  o = shell("true");
  o.out = Stream::append_to(tmp / "no/such/dir/log");
  CHECK_THROWS_AS(spawn(o), sia::Error);
}

TEST_CASE("spawn pipes, process groups and signals", "[os][spawn]") {
  SpawnOptions o = shell("cat; echo done >&2");
  o.in = o.out = o.err = Stream::pipe();
  Process p = spawn(o);
  REQUIRE(p.stdin_fd() >= 0);
  CHECK(::write(p.stdin_fd(), "hello", 5) == 5);
  p.close_stdin();
  char buf[64] = {};
  CHECK(::read(p.stdout_fd(), buf, sizeof buf) == 5);
  CHECK(std::string(buf) == "hello");
  CHECK(p.wait().success());

  // Its own group, which signal_group reaches; a blocked-then-defaulted signal kills it.
  o = shell("sleep 30");
  o.blocked_signals = std::vector<int>{};
  o.default_signals = {SIGTERM};
  p = spawn(o);
  CHECK(::getpgid(p.pid()) == p.pid());
  CHECK_FALSE(p.poll());
  p.signal_group(SIGTERM);
  CHECK(p.wait() == ProcessExit::killed(SIGTERM));
  CHECK(p.wait().status() == 128 + SIGTERM);

  // Joining a group.
  SpawnOptions leader = shell("sleep 30");
  Process a = spawn(leader);
  SpawnOptions member = shell("sleep 30");
  member.group = Group::join;
  member.join_group = a.pid();
  Process b = spawn(member);
  CHECK(::getpgid(b.pid()) == a.pid());
  a.signal_group(SIGKILL);
  CHECK(a.wait() == ProcessExit::killed(SIGKILL));
  CHECK(b.wait() == ProcessExit::killed(SIGKILL));
}

TEST_CASE("a detached program is not the caller's child", "[os][spawn]") {
  TempDir tmp;
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "echo $$ > " + tmp.path() + "/pid"};
  o.search_path = false;
  o.group = Group::detached;
  Process p = spawn(o);
  CHECK(p.pid() > 0);
  CHECK(p.exec_errno() == 0);
  CHECK(p.wait() == ProcessExit::exited(70));  // cannot be waited for
  for (int i = 0; i < 200 && slurp(tmp / "pid").empty(); ++i) ::usleep(10000);
  CHECK(slurp(tmp / "pid") == std::to_string(p.pid()) + "\n");
}

TEST_CASE("self_executable names the running program", "[os][spawn]") {
  CHECK(self_executable().find("test_os") != std::string::npos);
}
