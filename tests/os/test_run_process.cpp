#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "os/run_process.hpp"

using namespace sia::os;

namespace {

SpawnOptions piped(const std::string& script) {
  SpawnOptions o;
  o.argv = {"sh", "-c", script};
  o.in = o.out = o.err = Stream::pipe();
  return o;
}

}  // namespace

TEST_CASE("run_process feeds the input and collects both outputs", "[os][run_process]") {
  RunResult r = run_process(piped("cat; echo err >&2; exit 4"), "some input", 30, 5);
  CHECK(r.exit == ProcessExit::exited(4));
  CHECK(r.out == "some input");
  CHECK(r.err == "err\n");
  CHECK_FALSE(r.timed_out);
  CHECK(r.exec_errno == 0);
  CHECK(r.seconds >= 0);
}

TEST_CASE("run_process stops a program at its time limit", "[os][run_process]") {
  // The whole group gets SIGTERM.
  RunResult r = run_process(piped("sleep 30 & sleep 30; wait"), "", 0.3, 5);
  CHECK(r.timed_out);
  CHECK(r.exit == ProcessExit::killed(SIGTERM));
  CHECK(r.seconds < 5);

  // One that ignores SIGTERM gets SIGKILL after the grace period.
  SpawnOptions o;
  o.argv = {"sh", "-c", "trap '' TERM; sleep 30"};
  r = run_process(o, "", 0.2, 0.2);
  CHECK(r.timed_out);
  CHECK(r.seconds < 5);
}

TEST_CASE("run_process reports a program that cannot be executed", "[os][run_process]") {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  RunResult r = run_process(o, "", 0, 5);
  CHECK(r.exec_errno != 0);
  CHECK(r.exec_error.find("cannot execute '/nonexistent/program'") == 0);
  CHECK(r.exit == ProcessExit::exited(127));
}
