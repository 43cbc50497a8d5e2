#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "sim/searches.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"

#include "test_util.hpp"

using namespace sia;

TEST_CASE("the search generator groups a share of the jobs, seeded", "[searches]") {
  Catalog c(test::catalog_dir());
  std::vector<JobSpec> base =
      read_workload(test::data_dir() + "/workloads/philly/workload-1.csv", c);
  SearchOptions o;
  o.share = 0.5;
  o.seed = 3;
  auto a = base, b = base;
  auto apps_a = add_searches(a, o);
  auto apps_b = add_searches(b, o);
  REQUIRE(!apps_a.empty());
  REQUIRE(apps_a.size() == apps_b.size());
  std::map<std::string, int> trials;
  std::map<std::string, std::string> model;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].quality == b[i].quality);
    if (a[i].app.empty()) continue;
    ++trials[a[i].app];
    if (model.count(a[i].app)) CHECK(model[a[i].app] == a[i].model);
    model[a[i].app] = a[i].model;
    REQUIRE(a[i].quality);
    CHECK(a[i].hparams.count("lr") == 1);
  }
  int grouped = 0;
  for (const auto& [app, n] : trials) {
    CHECK(n >= 2);
    CHECK(n <= 100);
    grouped += n;
  }
  CHECK(grouped == static_cast<int>(std::llround(0.5 * base.size())));
  CHECK(a.size() == base.size());
}

namespace {

// tests/data/sim/search.jsonl (app "lr": trials t0-t3 of qualities 0.6, 0.1, 0.4, 0.8, and
// a job "solo") on the 64-GPU cluster, its app's scheduler replaced by `scheduler` if given.
struct SearchRun {
  Catalog c{test::catalog_dir()};
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  std::vector<AppSpec> apps;
  std::vector<JobSpec> w =
      read_workload(test::source_dir() + "/tests/data/sim/search.jsonl", c, &apps);
  SimOptions o;
  SimResult r;
  std::map<std::string, const JobResult*> by;

  explicit SearchRun(std::optional<AppScheduler> scheduler = std::nullopt) {
    REQUIRE(apps.size() == 1);
    REQUIRE(w.size() == 5);
    if (scheduler) apps[0].scheduler = *scheduler;
    o.apps = apps;
    r = simulate(cl, c, w, o);
    for (const auto& j : r.jobs) by[j.name] = &j;
  }
};

}  // namespace

TEST_CASE("successive halving in the simulator stops the worse trials at each rung",
          "[searches][simulator]") {
  SearchRun run;
  auto& [c, cl, apps, w, o, r, by] = run;
  // Qualities (lower is better): t1 0.1, t2 0.4, t0 0.6, t3 0.8. Phase 1 keeps t1 and t2,
  // phase 2 keeps t1, which trains to the end.
  CHECK(by["t3"]->stopped);
  CHECK(by["t0"]->stopped);
  CHECK(by["t2"]->stopped);
  CHECK_FALSE(by["t1"]->stopped);
  CHECK_FALSE(by["solo"]->stopped);
  CHECK(by["t3"]->stop_reason.find("phase 1 of 3") != std::string::npos);
  CHECK(by["t2"]->stop_reason.find("phase 2 of 3") != std::string::npos);
  CHECK(by["t2"]->completion > by["t3"]->completion);
  CHECK(by["t1"]->completion > by["t2"]->completion);
  CHECK(by["t1"]->rho);
  CHECK_FALSE(by["t3"]->rho);
  REQUIRE(r.apps.size() == 2);
  const AppResult& s = r.apps[0].name == "lr" ? r.apps[0] : r.apps[1];
  CHECK(s.trials == 4);
  CHECK(s.stopped == 3);
  CHECK(s.completion == by["t1"]->completion);
  CHECK(s.best_metric == Approx(0.1));
  REQUIRE(s.rho);
  CHECK(*s.rho > 0);
  CHECK(r.summary.apps == 2);
  CHECK(r.summary.app_rho_count == 2);
  CHECK(r.summary.worst_app_rho >= *s.rho);

  // Long rounds: a trial stops at its rung even when a round could take it to the end, so
  // every phase still ranks all its trials.
  o.round = 1200;
  o.fairness = false;
  SimResult longer = simulate(cl, c, w, o);
  int stopped = 0;
  for (const auto& j : longer.jobs) stopped += j.stopped;
  CHECK(stopped == 3);
  for (const auto& j : longer.jobs) {
    if (j.name == "t1") CHECK_FALSE(j.stopped);
  }
}

TEST_CASE("hyperband in the simulator stops the worse trials of each bracket",
          "[searches][simulator]") {
  // Two brackets with eta 2: t0 and t2 in successive halving over two phases (budgets 1/2,
  // 1), t1 and t3 trained to the end.
  SearchRun run(AppScheduler{AppSchedulerKind::hyperband, 2, 2});
  const SimResult& r = run.r;
  auto& by = run.by;
  // Qualities (lower is better): t0 0.6, t2 0.4: t0 stops at its rung.
  CHECK(by["t0"]->stopped);
  CHECK(by["t0"]->stop_reason.find("hyperband bracket 1 of 2: phase 1 of 2") == 0);
  CHECK_FALSE(by["t1"]->stopped);
  CHECK_FALSE(by["t2"]->stopped);
  CHECK_FALSE(by["t3"]->stopped);  // the worst, but in the bracket that stops none
  const AppResult& s = r.apps[0].name == "lr" ? r.apps[0] : r.apps[1];
  CHECK(s.trials == 4);
  CHECK(s.stopped == 1);
  CHECK(s.best_metric == Approx(0.1));  // over every bracket: t1's
  CHECK(s.completion ==
        std::max({by["t1"]->completion, by["t2"]->completion, by["t3"]->completion}));
}
