#include <catch2/catch.hpp>

#include "round/app_phase.hpp"
#include "round/contention.hpp"
#include "round/previous.hpp"
#include "round/schedule_pass.hpp"

#include "test_util.hpp"

using namespace sia;

namespace {

JobAllocation given(const std::string& job, int gpus) {
  JobAllocation ja;
  ja.job = job;
  ja.config = Config{0, 1, gpus};
  return ja;
}

JobState job(const std::string& name, const std::string& model) {
  JobState j;
  j.spec.name = name;
  j.spec.model = model;
  return j;
}

struct Tiny {
  Catalog catalog{test::catalog_dir()};
  Cluster cluster = read_cluster(test::data_dir() + "/clusters/sia-homogeneous-64.toml");
};

}  // namespace

TEST_CASE("a round keeps the previous decisions of the jobs it schedules only", "[round]") {
  CHECK_FALSE(previous_for(std::nullopt, {"a"}));
  Allocation prev;
  prev.jobs = {given("a", 4), given("gone", 2), given("c", 1)};
  const std::optional<Allocation> kept = previous_for(prev, {"c", "a", "new"});
  REQUIRE(kept);
  REQUIRE(kept->jobs.size() == 2);
  CHECK(kept->jobs[0].job == "a");  // in the previous allocation's order
  CHECK(kept->jobs[1].job == "c");
  CHECK(kept->jobs[0].config->gpus == 4);
  CHECK(previous_for(prev, {})->jobs.empty());
}

TEST_CASE("an app's phase step holds the trials at the budget, then closes", "[round]") {
  SuccessiveHalving sh({AppSchedulerKind::successive_halving, 2, 3}, "loss", true);
  std::vector<TrialProgress> live{
      {"a", 0.25, 0.9}, {"b", 0.1, 0.3}, {"c", 0.25, 0.2}, {"d", 0.2, 0.5}};
  PhaseStep step = step_phase(sh, live);
  CHECK_FALSE(step.closed);
  CHECK(step.stops.empty());
  CHECK(step.at_budget == std::vector<std::size_t>{0, 2});  // a and c wait for b and d
  CHECK(sh.phase() == 0);
  live[1].fraction = live[3].fraction = 0.25;
  step = step_phase(sh, live);
  CHECK(step.closed);
  CHECK(step.at_budget.empty());
  REQUIRE(step.stops.size() == 2);  // the worse half stops
  CHECK(step.stops[0].name == "d");
  CHECK(step.stops[1].name == "a");
  CHECK(sh.phase() == 1);
  // The survivors are not at the next budget yet: nothing waits, nothing closes.
  step = step_phase(sh, {{"b", 0.25, 0.3}, {"c", 0.25, 0.2}});
  CHECK_FALSE(step.closed);
  CHECK(step.at_budget.empty());
}

TEST_CASE("contention counts the units active in each round a unit was", "[round]") {
  Contention c;
  CHECK(c.n_avg() == 0);
  CHECK(c.n_avg_with(3) == 3);
  c.count(2);
  c.count(3);
  CHECK(c.rounds == 2);
  CHECK(c.contention_sum == 5);
  CHECK(c.n_avg() == 2.5);
  CHECK(c.n_avg_with(4) == 3);
}

TEST_CASE_METHOD(Tiny, "the scheduling pass estimates, solves and places a round", "[round]") {
  Estimator est(cluster, catalog);
  std::vector<JobState> jobs{job("z-first", "cifar10"), job("a-trial", "cifar10"),
                             job("broken", "nosuchmodel")};
  std::vector<JobState*> views{&jobs[0], &jobs[1], &jobs[2]};
  AppRef app;
  app.name = "search";
  std::map<std::string, std::string> unschedulable;
  int adjusted = 0;
  const GoodputMatrix m = estimate_round(est, cluster, "default", views, {{"a-trial", app}},
                                         &unschedulable, [&](std::size_t k, GoodputRow& row) {
                                           CHECK(row.job == jobs[k].spec.name);
                                           ++adjusted;
                                         });
  CHECK(adjusted == 2);
  REQUIRE(m.jobs.size() == 2);
  CHECK(m.jobs[0].job == "a-trial");  // rows by name
  CHECK(m.jobs[1].job == "z-first");
  CHECK(m.order == std::vector<std::string>{"z-first", "a-trial"});  // submission order
  REQUIRE(m.jobs[0].app);
  CHECK(m.jobs[0].app->name == "search");
  CHECK_FALSE(m.jobs[1].app);
  REQUIRE(unschedulable.count("broken"));
  CHECK(m.profile == "default");
  // Without a map, a job the estimator refuses stops the round.
  CHECK_THROWS_AS(estimate_round(est, cluster, "default", {&jobs[2]}, {}), Error);

  PolicyOptions po;
  po.wall_clock = false;
  std::unique_ptr<Policy> policy = make_policy("sia", po);
  const Allocation alloc = solve_round(*policy, m, std::nullopt);
  CHECK(alloc.order == m.order);
  for (bool artifact : {false, true}) {
    const Placement p = place_round(alloc, cluster, std::nullopt, artifact);
    for (const auto& name : m.order) {
      const JobAllocation* ja = alloc.find(name);
      REQUIRE(ja);
      REQUIRE(ja->config);  // 64 GPUs: both run
      const JobPlacement* jp = p.find(name);
      REQUIRE(jp);
      CHECK(jp->gpu_count() == ja->config->gpus);
    }
  }
}
