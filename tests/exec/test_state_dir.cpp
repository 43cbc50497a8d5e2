#include <stdlib.h>

#include <catch2/catch.hpp>

#include "exec/state_dir.hpp"
#include "temp_dir.hpp"
#include "test_util.hpp"

using namespace sia::exec;
using sia::exec::test::TempDir;
using sia::test::error_of;

namespace {

JobLaunch launch(int generation) {
  JobLaunch l;
  l.job = "j";
  l.node = "n0";
  l.gpu_type = "t4";
  l.nodes = {sia::NodeGpus{"n0", {0}}};
  l.command = {"train"};
  l.generation = generation;
  return l;
}

JobStatus status(int generation, RunState state) {
  JobStatus s;
  s.job = "j";
  s.generation = generation;
  s.state = state;
  s.supervisor = ProcessId{4242, 1, "b"};
  return s;
}

}  // namespace

TEST_CASE("a job's record folds in whether its supervisor lives", "[state]") {
  TempDir tmp;
  bool alive = true;
  StateDir state(tmp / "s", [&](const ProcessId&) { return alive; });
  CHECK_FALSE(state.exists());
  state.bind_node("n0");
  CHECK(state.jobs().empty());
  state.write_launch(launch(2));
  JobRecord r = state.record("j");
  CHECK(r.status.state == RunState::killed);
  CHECK(r.status.reason == "no supervisor recorded round 2");
  CHECK_FALSE(r.live());

  state.write_status(status(2, RunState::running));
  r = state.record("j");
  CHECK(r.status.state == RunState::running);
  CHECK(r.live());
  alive = false;
  r = state.record("j");
  CHECK(r.status.state == RunState::killed);
  CHECK(r.status.reason == "its supervisor (pid 4242) is gone");
  state.write_status(status(2, RunState::preempted));
  CHECK(state.record("j").status.state == RunState::preempted);
  // A status of an older round does not describe this one.
  state.write_launch(launch(3));
  CHECK(state.record("j").status.reason == "no supervisor recorded round 3");
  CHECK(state.jobs() == std::vector<std::string>{"j"});
}

TEST_CASE("stop requests and holds are kept per job", "[state]") {
  TempDir tmp;
  StateDir state(tmp.path());
  state.write_launch(launch(1));
  CHECK_FALSE(state.read_stop("j"));
  state.write_stop("j", StopRequest{1, 2.5, "why"});
  auto r = state.read_stop("j");
  REQUIRE(r);
  CHECK(r->generation == 1);
  CHECK(r->grace == 2.5);
  CHECK(r->reason == "why");
  CHECK_FALSE(state.held("j"));
  state.set_held("j", true);
  CHECK(state.record("j").held);
  state.set_held("j", false);
  state.set_held("j", false);
  CHECK_FALSE(state.held("j"));
}

TEST_CASE("a state directory serves one node and one sia-run at a time", "[state]") {
  TempDir tmp;
  StateDir state(tmp / "s/");
  CHECK(state.root() == tmp / "s");
  CHECK(state.rank_log("j", 3) == tmp / "s/jobs/j/logs/rank-3.log");
  CHECK(state.ckpt_dir("j", "") == tmp / "s/jobs/j/ckpt");
  CHECK(state.ckpt_dir("j", "/ck") == "/ck/j");
  state.bind_node("n0");
  state.bind_node("n0");
  CHECK(state.bound_node() == "n0");
  auto e = error_of([&] { state.bind_node("n1"); });
  CHECK(e.first == 78);
  CHECK(e.second == "state directory " + tmp / "s" +
                        " serves node \"n0\", not \"n1\" (give each node its own --state-dir)");
  {
    StateLock held = state.lock();
    auto busy = error_of([&] { StateDir(tmp / "s").lock(); });
    CHECK(busy.first == 75);
    CHECK(busy.second.find("is in use by another sia-run (pid ") != std::string::npos);
  }
  CHECK_NOTHROW(state.lock());
}

TEST_CASE("job names must be usable as directory names", "[state]") {
  CHECK(sia::valid_job_name("bert-1.v2_a"));
  CHECK_FALSE(sia::valid_job_name(".."));
  CHECK_FALSE(sia::valid_job_name("."));
  CHECK_FALSE(sia::valid_job_name("a/b"));
  CHECK_FALSE(sia::valid_job_name(""));
}

TEST_CASE("the default state directory follows the environment", "[state]") {
  auto saved = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto s = saved("SIA_STATE_DIR"), x = saved("XDG_STATE_HOME"), h = saved("HOME");
  ::setenv("SIA_STATE_DIR", "/a", 1);
  ::setenv("XDG_STATE_HOME", "/x", 1);
  ::setenv("HOME", "/h", 1);
  CHECK(default_state_dir() == "/a");
  ::unsetenv("SIA_STATE_DIR");
  CHECK(default_state_dir() == "/x/sia/run");
  ::unsetenv("XDG_STATE_HOME");
  CHECK(default_state_dir() == "/h/.local/state/sia/run");
  ::unsetenv("HOME");
  CHECK(error_of([] { default_state_dir(); }).first == 78);
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) ::setenv(n, v->c_str(), 1);
  };
  restore("SIA_STATE_DIR", s);
  restore("XDG_STATE_HOME", x);
  restore("HOME", h);
}
