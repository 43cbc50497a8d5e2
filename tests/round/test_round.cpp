#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "round/app_phase.hpp"
#include "round/census.hpp"
#include "round/contention.hpp"
#include "round/previous.hpp"
#include "round/round_documents.hpp"
#include "round/round_driver.hpp"
#include "round/schedule_pass.hpp"

#include "exec/temp_dir.hpp"
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
  for (Compat compat : {Compat::standard, Compat::reference}) {
    const Placement p = place_round(alloc, cluster, std::nullopt, placer_quirks(compat));
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

namespace {

// A world that writes down the steps run_round takes, and the census it was handed.
struct FakeWorld : RoundWorld {
  std::vector<std::string> steps;
  std::vector<CensusEntry> jobs;
  int units = 0;
  std::vector<int> seen;  // the census's active jobs, as each later step saw them
  void collect() override { steps.push_back("collect"); }
  void app_phases() override { steps.push_back("app_phases"); }
  Census census() override {
    steps.push_back("census");
    return take_census(jobs, units);
  }
  void schedule(const Census& c) override {
    steps.push_back("schedule");
    seen.push_back(static_cast<int>(c.active.size()));
  }
  void book_fairness(const Census& c) override {
    steps.push_back("book_fairness");
    seen.push_back(c.active_units);
  }
  void deliver(const Census& c) override {
    steps.push_back("deliver");
    seen.push_back(static_cast<int>(c.active.size()));
  }
  void close(const Census&) override { steps.push_back("close"); }
};

}  // namespace

TEST_CASE("a round runs its steps in one order, each after the census on its census", "[round]") {
  FakeWorld w;
  w.jobs = {{false, false, true, false, 0}, {false, false, true, true, 1}};
  w.units = 2;
  run_round(w);
  CHECK(w.steps == std::vector<std::string>{"collect", "app_phases", "census", "schedule",
                                            "book_fairness", "deliver", "close"});
  CHECK(w.seen == std::vector<int>{1, 2, 1});
  run_round(w);  // a second round: the same steps again
  CHECK(w.steps.size() == 14);
}

TEST_CASE("the census schedules the arrived, live, not waiting jobs; waiting ones count",
          "[round]") {
  std::vector<CensusEntry> jobs = {
      {false, false, true, false, 0},   // 0: scheduled, unit 0
      {true, false, true, false, 1},    // 1: ended before
      {true, true, true, false, 1},     // 2: ended this round
      {false, false, true, true, 2},    // 3: waiting (held, at its rung): unit 2 counts
      {false, false, false, false, 3},  // 4: not submitted yet
      {false, false, true, false, 0},   // 5: another trial of unit 0
  };
  const Census c = take_census(jobs, 4);
  CHECK(c.active == std::vector<int>{0, 5});
  CHECK(c.finished_now == std::vector<int>{2});
  CHECK(c.ended == 2);
  CHECK(c.unit_active == std::vector<char>{1, 0, 1, 0});
  CHECK(c.active_units == 2);
  const Census none = take_census({}, 0);
  CHECK(none.active.empty());
  CHECK(none.active_units == 0);
}

TEST_CASE("a round's documents are named and written by one writer", "[round]") {
  CHECK(round_document_name(5, "jobs") == "r000005-jobs.json");
  CHECK(round_document_name(1234567, "placement") == "r1234567-placement.json");
  JobState j = job("a", "resnet18");
  j.spec.command = {"train.py"};
  const std::string doc = jobs_document({{"round", 1}}, {&j});
  CHECK(doc.find("\"Jobs\"") != std::string::npos);
  CHECK(doc.find("train.py") == std::string::npos);  // commands are not kept
  exec::test::TempDir dir;
  save_round_documents(dir.path(), 7, {{"jobs", doc}}, 0600);
  std::ifstream in(dir / "r000007-jobs.json");
  const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(saved == doc);
}
