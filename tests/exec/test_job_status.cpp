#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "exec/job_launch.hpp"
#include "exec/job_status.hpp"

using namespace sia::exec;

TEST_CASE("exits combine like srun: highest code, else highest signal", "[exit]") {
  using E = ProcessExit;
  CHECK_FALSE(combine_exits({}));
  CHECK(combine_exits({E::exited(0), E::exited(0)}) == E::exited(0));
  CHECK(combine_exits({E::exited(3), E::killed(9), E::exited(1)}) == E::exited(3));
  CHECK(combine_exits({E::killed(15), E::killed(9), E::exited(0)}) == E::killed(15));
  CHECK(E::killed(9).status() == 137);
  CHECK(E::exited(75).status() == 75);
  CHECK(E::from_wait_status(3 << 8) == E::exited(3));
  CHECK(E::from_wait_status(9) == E::killed(9));
  CHECK(E::killed(9).describe() == "signal 9 (Killed)");
}

TEST_CASE("a job's exit prefers the ranks that ended on their own", "[exit]") {
  JobStatus s;
  s.ranks = {RankStatus{0, 1, ProcessExit::exited(3), false},
             RankStatus{1, 2, ProcessExit::exited(75), true},
             RankStatus{2, 3, ProcessExit::killed(9), true}};
  CHECK(s.exit() == ProcessExit::exited(3));
  s.ranks[0].exit = ProcessExit::exited(0);
  CHECK(s.exit() == ProcessExit::exited(75));
  s.ranks[1].exit.reset();
  CHECK(s.live_pids() == std::vector<pid_t>{2});
}

TEST_CASE("statuses and launches read back what was written", "[exit]") {
  JobStatus s;
  s.job = "j";
  s.generation = 2;
  s.state = RunState::stopping;
  s.reason = "why";
  s.supervisor = ProcessId{42, 1234, "boot"};
  s.group = 7;
  s.ranks = {RankStatus{0, 7, ProcessExit::killed(9), true}, RankStatus{1, 8, {}, false}};
  nlohmann::json j = job_status_to_json(s);
  JobStatus back = parse_job_status(sia::Node(j, "status.json", ""));
  CHECK(job_status_to_json(back) == j);
  CHECK(back.ranks[0].exit == ProcessExit::killed(9));
  CHECK_FALSE(back.ranks[1].exit);

  JobLaunch l;
  l.job = "j";
  l.node = "n";
  l.gpu_type = "t4";
  l.nodes = {sia::NodeGpus{"n", {1, 3}}};
  l.command = {"python", "train.py"};
  l.generation = 2;
  l.ranks = {RankLaunch{0, 0, {1}, "/s/rank-0.log", {{"RANK", "0"}}}};
  nlohmann::json lj = job_launch_to_json(l);
  CHECK(job_launch_to_json(parse_job_launch(sia::Node(lj, "launch.json", ""))) == lj);
  CHECK(parse_run_state("preempted") == RunState::preempted);
  CHECK_FALSE(parse_run_state("lost"));
  CHECK(holds_gpus("running"));
  CHECK(holds_gpus("stopping"));
  CHECK_FALSE(holds_gpus("finished"));
  CHECK_FALSE(holds_gpus("lost"));
}
