#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "exec/supervisor.hpp"
#include "fakes.hpp"

using namespace sia::exec;
using sia::exec::test::FakeClock;
using sia::exec::test::FakeLauncher;
using sia::exec::test::FakeRank;

namespace {

struct Run {
  FakeClock clock;
  FakeLauncher launcher;
  std::vector<JobStatus> recorded;
  std::optional<StopRequest> request;

  explicit Run(std::vector<FakeRank> ranks) : launcher(clock, std::move(ranks)) {}

  JobStatus go(double grace = 10) {
    SupervisorConfig c;
    c.job = "j";
    c.generation = 3;
    c.grace = sia::os::span(grace);
    for (int r = 0; r < 2; ++r) {
      RankCommand cmd;
      cmd.rank = r;
      cmd.argv = {"train"};
      c.ranks.push_back(cmd);
    }
    Supervisor s(
        launcher, clock, c, [&](const JobStatus& st) { recorded.push_back(st); },
        [&] { return request; });
    return s.run();
  }
  std::vector<std::string> states() const {
    std::vector<std::string> out;
    for (const auto& s : recorded) out.push_back(to_string(s.state));
    return out;
  }
};

FakeRank ends(double after, int code) {
  FakeRank r;
  r.ends_after = after;
  r.ends_with = ProcessExit::exited(code);
  return r;
}

}  // namespace

TEST_CASE("every rank exiting 0 finishes the job", "[supervisor]") {
  Run run({ends(5, 0), ends(6, 0)});
  JobStatus s = run.go();
  CHECK(s.state == RunState::finished);
  CHECK(s.group == 100);
  CHECK(s.exit() == ProcessExit::exited(0));
  CHECK(run.recorded.front().state == RunState::running);
  CHECK(run.recorded.front().ranks.at(1).pid == 101);
  CHECK(run.clock.elapsed() == Approx(6));
}

TEST_CASE("a failing rank stops the others and its status is the job's", "[supervisor]") {
  Run run({ends(2, 3), FakeRank{}});
  JobStatus s = run.go();
  CHECK(s.state == RunState::failed);
  CHECK(s.reason == "rank 0 failed: exit status 3");
  CHECK(s.exit() == ProcessExit::exited(3));  // not rank 1's 75
  CHECK(s.ranks.at(1).exit == ProcessExit::exited(75));
  CHECK(s.ranks.at(1).stopped);
  CHECK_FALSE(s.ranks.at(0).stopped);
  CHECK(run.launcher.events.at(2) == "signal 15 at 2.0");
  CHECK(run.states() == std::vector<std::string>{"running", "stopping", "stopping", "failed"});
}

TEST_CASE("a stop request checkpoint-stops the job with the request's grace", "[supervisor]") {
  Run run({FakeRank{}, FakeRank{}});
  run.request = StopRequest{3, 2.0, "moved off this node"};
  run.launcher.interrupt_at(4);
  JobStatus s = run.go();
  CHECK(s.state == RunState::preempted);
  CHECK(s.reason == "moved off this node");
  CHECK(s.exit() == ProcessExit::exited(75));
  CHECK(run.clock.elapsed() == Approx(4.5));
}

TEST_CASE("a rank that ignores SIGTERM is killed when the grace period ends", "[supervisor]") {
  FakeRank stubborn;
  stubborn.on_term = FakeRank::OnTerm::ignore;
  Run run({FakeRank{}, stubborn});
  run.request = StopRequest{3, 1.5, "stop"};
  run.launcher.interrupt_at(1);
  JobStatus s = run.go();
  CHECK(s.state == RunState::killed);
  CHECK(s.ranks.at(0).exit == ProcessExit::exited(75));
  CHECK(s.ranks.at(1).exit == ProcessExit::killed(SIGKILL));
  CHECK(run.launcher.events.at(3) == "signal 9 at 2.5");
  CHECK(s.exit() == ProcessExit::exited(75));  // the highest exit code before signals
}

TEST_CASE("a stale stop request's grace is not used", "[supervisor]") {
  FakeRank stubborn;
  stubborn.on_term = FakeRank::OnTerm::ignore;
  Run run({stubborn, stubborn});
  run.request = StopRequest{2, 0.1, "old"};  // generation 2: not this one
  run.launcher.interrupt_at(1);
  JobStatus s = run.go(7);
  CHECK(s.state == RunState::killed);
  CHECK(run.clock.elapsed() == Approx(8));  // 1 + the configured 7 s
  CHECK(s.reason.rfind("stop requested", 0) == 0);
}

TEST_CASE("a second stop request kills at once", "[supervisor]") {
  FakeRank stubborn;
  stubborn.on_term = FakeRank::OnTerm::ignore;
  Run run({stubborn, stubborn});
  run.launcher.interrupt_at(1);
  run.launcher.interrupt_at(2);
  JobStatus s = run.go(100);
  CHECK(s.state == RunState::killed);
  CHECK(run.clock.elapsed() == Approx(2));
  CHECK(s.reason == "stop requested (SIGTERM); killed on a second stop request");
}

TEST_CASE("a rank that preempts itself stops the others: preempted", "[supervisor]") {
  Run run({ends(3, 75), FakeRank{}});
  JobStatus s = run.go();
  CHECK(s.state == RunState::preempted);
  CHECK(s.reason == "rank 0 exited 75 (preempted itself)");
}

TEST_CASE("ranks dying of the stop signal itself count as killed", "[supervisor]") {
  FakeRank plain;
  plain.on_term = FakeRank::OnTerm::die;
  Run run({plain, plain});
  run.launcher.interrupt_at(1);
  JobStatus s = run.go();
  CHECK(s.state == RunState::killed);
  CHECK(s.exit()->status() == 128 + SIGTERM);
}

TEST_CASE("a rank that cannot be executed fails the job, the others are stopped", "[supervisor]") {
  FakeRank bad;
  bad.exec_fails = true;
  Run run({FakeRank{}, bad});
  JobStatus s = run.go();
  CHECK(s.state == RunState::failed);
  CHECK(s.reason == "rank 1: cannot execute 'train': No such file or directory");
  CHECK(s.exit() == ProcessExit::exited(127));
  CHECK_FALSE(s.ranks.at(1).stopped);
  CHECK(s.ranks.at(0).stopped);
}

TEST_CASE("the rank that failed by itself is blamed, not the peer that lost it first",
          "[supervisor]") {
  // Rank 1 notices the lost peer (69) before rank 0, busy printing its traceback, exits 1.
  FakeRank raising = ends(2.2, 1);
  raising.on_term = FakeRank::OnTerm::ignore;
  Run run({raising, ends(2.0, 69)});
  JobStatus s = run.go();
  CHECK(s.state == RunState::failed);
  CHECK(s.failing_rank() == 0);
  CHECK(s.failed_rank == 0);
  CHECK(s.reason == "rank 0 failed: exit status 1; rank 1 lost a peer (exit status 69)");
  CHECK(s.exit() == ProcessExit::exited(1));
  CHECK_FALSE(s.ranks.at(0).stopped);
  // The status file says so too.
  JobStatus back = parse_job_status(sia::Node(job_status_to_json(s), "status.json", ""));
  CHECK(back.failing_rank() == 0);
  CHECK(back.exit() == ProcessExit::exited(1));
}

TEST_CASE("a lost peer alone is blamed when no rank failed by itself", "[supervisor]") {
  Run run({FakeRank{}, ends(2.0, 69)});
  JobStatus s = run.go();
  CHECK(s.state == RunState::failed);
  CHECK(s.failing_rank() == 1);
  CHECK(s.reason == "rank 1 failed: exit status 69 (a peer was lost)");
  CHECK(s.exit() == ProcessExit::exited(69));
  CHECK(s.ranks.at(0).stopped);  // it checkpoint-stopped (75): not a failure of its own
}

TEST_CASE("a rank failing while a stop request is served does not turn it into a failure",
          "[supervisor]") {
  FakeRank bad;
  bad.term_status = 1;  // its checkpoint failed
  Run run({bad, FakeRank{}});
  run.launcher.interrupt_at(4);
  JobStatus s = run.go();
  CHECK(s.state == RunState::preempted);
  CHECK_FALSE(s.failed_rank);
}
