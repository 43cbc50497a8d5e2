#include <catch2/catch.hpp>

#include "exec/reconcile.hpp"

using namespace sia::exec;

namespace {

JobLaunch launch(const std::string& job, std::vector<int> gpus, int generation = 0) {
  JobLaunch l;
  l.job = job;
  l.node = "n0";
  l.gpu_type = "t4";
  l.nodes = {sia::NodeGpus{"n0", gpus}};
  l.command = {"train"};
  l.batch.global = 64;
  l.generation = generation;
  return l;
}

JobRecord record(const JobLaunch& l, RunState state, bool held = false) {
  JobRecord r;
  r.job = l.job;
  r.launch = l;
  r.status.job = l.job;
  r.status.generation = l.generation;
  r.status.state = state;
  r.held = held;
  return r;
}

PlannedAction only(const std::vector<PlannedAction>& v) {
  REQUIRE(v.size() == 1);
  return v.front();
}

}  // namespace

TEST_CASE("a job new on the node starts at round 1", "[reconcile]") {
  auto a = only(reconcile({launch("a", {0, 1})}, {}, {}, Mode::apply));
  CHECK(a.action == Action::start);
  CHECK(a.generation == 1);
  CHECK(a.gpus == std::vector<int>{0, 1});
  CHECK(a.reason == "new on this node");
}

TEST_CASE("an unchanged running job is kept", "[reconcile]") {
  auto rec = record(launch("a", {0, 1}, 4), RunState::running);
  auto a = only(reconcile({launch("a", {0, 1})}, {rec}, {}, Mode::apply));
  CHECK(a.action == Action::keep);
  CHECK(a.generation == 4);
}

TEST_CASE("a running job whose placement changed restarts", "[reconcile]") {
  auto rec = record(launch("a", {0, 1, 2, 3}, 2), RunState::running);
  auto a = only(reconcile({launch("a", {0, 1})}, {rec}, {}, Mode::apply));
  CHECK(a.action == Action::restart);
  CHECK(a.generation == 3);
  CHECK(a.reason == "shrank: GPUs 0,1,2,3 -> 0,1");

  JobLaunch moved = launch("a", {2, 3});
  moved.gpu_type = "a100";
  moved.batch.global = 128;
  moved.batch.accum_steps = 2;
  a = only(
      reconcile({moved}, {record(launch("a", {0, 1}, 1), RunState::running)}, {}, Mode::apply));
  CHECK(a.reason ==
        "GPU type t4 -> a100; moved: GPUs 0,1 -> 2,3; batch_size 64 -> 128; "
        "accum_steps 0 -> 2");

  JobLaunch other = launch("a", {0, 1});
  other.nodes.push_back(sia::NodeGpus{"n1", {0, 1}});
  a = only(
      reconcile({other}, {record(launch("a", {0, 1}, 1), RunState::running)}, {}, Mode::apply));
  CHECK(a.action == Action::restart);
  CHECK(a.reason == "nodes n0:0,1 -> n0:0,1 n1:0,1");
}

TEST_CASE("a batch-only change of a running job is a resize, not a restart", "[reconcile]") {
  JobLaunch running = launch("a", {0, 1}, 3);
  running.batch.local = 32;
  running.batch_plan = "/state/jobs/a/batch-plan.json";  // its workers read SIA_BATCH_PLAN
  auto rec = record(running, RunState::running);
  JobLaunch want = launch("a", {0, 1});
  want.batch.global = 192;
  want.batch.local = 32;
  want.batch.accum_steps = 2;
  auto a = only(reconcile({want}, {rec}, {}, Mode::apply, 9));
  CHECK(a.action == Action::resize);
  CHECK(a.generation == 3);  // the same generation: nothing restarts
  CHECK(a.reason == "batch_size 64 -> 192; accum_steps 0 -> 2");
  CHECK(std::string(to_string(Action::resize)) == "resize");
  // An ended job with a new batch starts with it.
  auto ended = record(running, RunState::preempted);
  a = only(reconcile({want}, {ended}, {}, Mode::apply));
  CHECK(a.action == Action::start);
  CHECK(a.generation == 4);
  // A placement that stops giving batch settings leaves the batch to the worker's start.
  JobLaunch bare = launch("a", {0, 1});
  bare.batch.global = 0;
  a = only(reconcile({bare}, {rec}, {}, Mode::apply));
  CHECK(a.action == Action::restart);
  CHECK(a.reason == "batch_size 64 -> 0; local_bsz 32 -> 0");
  // Without a local batch, or workers started without SIA_BATCH_PLAN (an older sia-run),
  // no batch plan can carry the change: a restart.
  JobLaunch no_local = want;
  no_local.batch.local = 0;
  CHECK(only(reconcile({no_local}, {rec}, {}, Mode::apply)).action == Action::restart);
  JobLaunch old = running;
  old.batch_plan.clear();
  CHECK(only(reconcile({want}, {record(old, RunState::running)}, {}, Mode::apply)).action ==
        Action::restart);
}

TEST_CASE("a running job no longer placed here is stopped", "[reconcile]") {
  auto rec = record(launch("a", {0}, 1), RunState::running);
  auto b = record(launch("b", {1}, 1), RunState::stopping);
  auto gone = record(launch("c", {2}, 1), RunState::preempted);
  auto v = reconcile({}, {rec, b, gone}, {"a"}, Mode::apply);
  REQUIRE(v.size() == 2);
  CHECK(v[0].action == Action::stop);
  CHECK(v[0].reason == "moved off this node");
  CHECK(v[0].gpus == std::vector<int>{0});
  CHECK(v[1].job == "b");
  CHECK(v[1].reason == "no longer placed");
}

TEST_CASE("ended jobs: resumed, left alone or run again", "[reconcile]") {
  auto w = launch("a", {0});
  auto a =
      only(reconcile({w}, {record(launch("a", {0}, 2), RunState::preempted)}, {}, Mode::apply));
  CHECK(a.action == Action::start);
  CHECK(a.generation == 3);
  CHECK(a.reason == "preempted, resume");
  a = only(reconcile({w}, {record(launch("a", {0}, 2), RunState::killed)}, {}, Mode::apply));
  CHECK(a.action == Action::start);

  a = only(reconcile({w}, {record(launch("a", {0}, 2), RunState::finished)}, {}, Mode::apply));
  CHECK(a.action == Action::leave);
  CHECK(a.generation == 2);
  a = only(reconcile({w}, {record(launch("a", {0}, 2), RunState::finished)}, {}, Mode::run));
  CHECK(a.action == Action::leave);

  auto failed = record(launch("a", {0}, 2), RunState::failed);
  failed.status.ranks = {RankStatus{0, 10, ProcessExit::exited(3), false}};
  a = only(reconcile({w}, {failed}, {}, Mode::apply));
  CHECK(a.action == Action::leave);
  CHECK(a.reason == "failed (exit status 3); starts again when its placement changes");
  a = only(reconcile({w}, {failed}, {}, Mode::run));
  CHECK(a.action == Action::start);
  CHECK(a.reason == "failed (exit status 3), run again");

  auto held = record(launch("a", {0}, 2), RunState::preempted, true);
  CHECK(only(reconcile({w}, {held}, {}, Mode::apply)).action == Action::leave);
  CHECK(only(reconcile({w}, {held}, {}, Mode::run)).action == Action::start);
  // A changed placement starts any ended job but a finished one: finished is final (the
  // placement may have been decided before the controller heard of the end).
  auto w2 = launch("a", {1});
  a = only(reconcile({w2}, {held}, {}, Mode::apply));
  CHECK(a.action == Action::start);
  CHECK(a.reason == "preempted, placement changed: moved: GPUs 0 -> 1");
  for (Mode m : {Mode::apply, Mode::run}) {
    a = only(reconcile({w2}, {record(launch("a", {0}, 2), RunState::finished)}, {}, m));
    CHECK(a.action == Action::leave);
    CHECK(a.generation == 2);
    CHECK(a.reason == "finished (not started again: moved: GPUs 0 -> 1)");
  }
}

TEST_CASE("a new attempt starts a failed job again on its placement", "[reconcile]") {
  // The controller's restart of a job whose nodes could not reach each other: the same
  // placement, the Jobs document's state.attempt one more (absent from old ones: 0).
  auto failed = record(launch("a", {0}, 2), RunState::failed);
  failed.status.ranks = {RankStatus{0, 10, ProcessExit::exited(69), false}};
  auto w = launch("a", {0});
  w.attempt = 1;
  auto a = only(reconcile({w}, {failed}, {}, Mode::apply, 5));
  CHECK(a.action == Action::start);
  CHECK(a.generation == 5);
  CHECK(a.reason == "failed (exit status 69), placement changed: attempt 0 -> 1");
  // The same attempt again: left alone, as any failed job on an unchanged placement.
  auto again = record(w, RunState::failed);
  again.launch->generation = 5;
  CHECK(only(reconcile({w}, {again}, {}, Mode::apply)).action == Action::leave);
  // A running generation of an older attempt restarts.
  auto running = record(launch("a", {0}, 3), RunState::running);
  a = only(reconcile({w}, {running}, {}, Mode::apply));
  CHECK(a.action == Action::restart);
  CHECK(a.reason == "attempt 0 -> 1");
}

TEST_CASE("actions are sorted by job", "[reconcile]") {
  auto v = reconcile({launch("b", {1}), launch("d", {2})},
                     {record(launch("c", {0}, 1), RunState::running)}, {}, Mode::apply);
  REQUIRE(v.size() == 3);
  CHECK(v[0].job == "b");
  CHECK(v[1].job == "c");
  CHECK(v[2].job == "d");
}

TEST_CASE("the controller's round numbers a job alike on every node", "[reconcile]") {
  // Node A ran the job before (round 2 here); node B never did. Placed on both in the
  // controller's round 9, both start it as round 9: one SIA_ROUND, one MASTER_PORT.
  auto w = launch("a", {0});
  auto on_a =
      only(reconcile({w}, {record(launch("a", {1}, 2), RunState::running)}, {}, Mode::apply, 9));
  auto on_b = only(reconcile({w}, {}, {}, Mode::apply, 9));
  CHECK(on_a.action == Action::restart);
  CHECK(on_b.action == Action::start);
  CHECK(on_a.generation == 9);
  CHECK(on_b.generation == 9);
  // Kept jobs keep their round; a floor below the next round does not go back.
  auto kept =
      only(reconcile({w}, {record(launch("a", {0}, 9), RunState::running)}, {}, Mode::apply, 12));
  CHECK(kept.action == Action::keep);
  CHECK(kept.generation == 9);
  auto resumed =
      only(reconcile({w}, {record(launch("a", {0}, 9), RunState::preempted)}, {}, Mode::apply, 4));
  CHECK(resumed.generation == 10);
}

// A trial of an app whose workers reached SIA_STOP_FRACTION and exited 75 by themselves
// while a round still had it placed (the controller had not read its last report yet): it
// is left alone, not resumed to stop again at once, also when placed elsewhere; a new
// budget or a stop request's 75 starts it as before.
TEST_CASE("a trial stopped at its rung is not started again for the same budget",
          "[reconcile][app]") {
  JobLaunch l = launch("t", {0}, 3);
  l.stop_fraction = 0.25;
  JobRecord rec = record(l, RunState::preempted);
  rec.status.ranks = {RankStatus{0, 100, sia::os::ProcessExit::exited(75), false}};
  JobLaunch want = launch("t", {0});
  want.stop_fraction = 0.25;
  auto a = only(reconcile({want}, {rec}, {}, Mode::apply));
  CHECK(a.action == Action::leave);
  CHECK(a.generation == 3);
  CHECK(a.reason ==
        "stopped at its rung (SIA_STOP_FRACTION 0.25); starts again when its budget changes");
  JobLaunch moved = launch("t", {1});
  moved.stop_fraction = 0.25;
  CHECK(only(reconcile({moved}, {rec}, {}, Mode::apply)).action == Action::leave);
  // The next phase's budget: it trains on.
  want.stop_fraction = 0.5;
  CHECK(only(reconcile({want}, {rec}, {}, Mode::apply)).action == Action::start);
  want.stop_fraction = 0;  // the last phase: to the end
  CHECK(only(reconcile({want}, {rec}, {}, Mode::apply)).action == Action::start);
  // Stopped by a stop request (a round that moved it off), not at its rung: resumed.
  want.stop_fraction = 0.25;
  JobRecord asked = rec;
  asked.status.ranks[0].stopped = true;
  auto b = only(reconcile({want}, {asked}, {}, Mode::apply));
  CHECK(b.action == Action::start);
  CHECK(b.reason == "preempted (exit status 75), resume");
  // sia-run run starts it whatever its budget.
  CHECK(only(reconcile({want}, {rec}, {}, Mode::run)).action == Action::start);
}
