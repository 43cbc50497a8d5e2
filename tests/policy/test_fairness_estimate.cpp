#include <catch2/catch.hpp>

#include "policy/fairness_estimate.hpp"
#include "policy/themis_app.hpp"
#include "themis_rows.hpp"

using namespace sia;
using namespace sia::themis_test;

TEST_CASE("fairness estimate: a job's rho from its GPUs this round", "[fairness]") {
  // 16 GPUs; an 8-GPU gang at 8 iterations/s, 4,000 of 10,000 iterations done, age 3,000 s.
  // N_avg 4: the fair share is 4 GPUs, T_id = 10,000 / 4 = 2,500 s (the worked example).
  const Cluster c = cluster_with({{"a", 4, 4}});
  const GoodputMatrix m = matrix_of(c, {gang_job(c, "j", 8, {8.0}, 3000, 4000, 10000)});
  const std::map<std::string, double> n_avg = {{"j", 4.0}};
  const Config gang{0, 2, 8};
  // Given its gang: T_sh = 3,000 + 6,000 / 8 = 3,750, rho 1.5.
  FairnessEstimate e = estimate_fairness(m, {{"j", gang}}, n_avg, {}, 300);
  REQUIRE(e.jobs.count("j"));
  CHECK(e.jobs["j"].t_id == Approx(2500));
  CHECK(e.jobs["j"].t_sh == Approx(3750));
  CHECK(e.jobs["j"].rho() == Approx(1.5));
  CHECK(e.apps.empty());
  // Given nothing: it waits the round (300 s), then runs on its fastest gang.
  e = estimate_fairness(m, {}, n_avg, {}, 300);
  CHECK(e.jobs["j"].t_sh == Approx(4050));
  // Alone all along (N_avg 1): its share is capped at its gang, T_id 1,250 s.
  e = estimate_fairness(m, {{"j", gang}}, {}, {}, 300);
  CHECK(e.jobs["j"].t_id == Approx(1250));
  // Moving costs its restart penalty.
  GoodputMatrix moved = m;
  moved.jobs[0].current = Config{0, 4, 8};
  moved.jobs[0].restart_penalty = 30;
  e = estimate_fairness(moved, {{"j", gang}}, n_avg, {}, 300);
  CHECK(e.jobs["j"].t_sh == Approx(3780));
  // Without progress information there is no figure.
  GoodputMatrix unknown = m;
  unknown.jobs[0].progress.reset();
  CHECK(estimate_fairness(unknown, {{"j", gang}}, n_avg, {}, 300).jobs.empty());
}

TEST_CASE("fairness estimate: an app's rho, one unit with its trials' GPUs", "[fairness]") {
  // Four 1-GPU trials at 1 iteration/s, 100 iterations each, successive halving eta 2 over 3
  // phases (budgets 25, 50, 100; 4, 2, 1 trials), 50 s old; a job beside them.
  const Cluster c = cluster_with({{"a", 4, 4}});
  std::vector<GoodputRow> rows;
  for (int k = 0; k < 4; ++k) {
    GoodputRow r = gang_job(c, "s-" + std::to_string(k), 1, {1.0}, 50, 0, 100);
    r.app = AppRef{"s", 4, 2, 3, 0, 0, 1};
    rows.push_back(r);
  }
  rows.push_back(gang_job(c, "j", 8, {8.0}, 3000, 4000, 10000));
  const GoodputMatrix m = matrix_of(c, rows);
  CHECK(fairness_units(m) == 2);
  // N_avg 4: a share of 4 GPUs runs all four trials at once: T_id = 25 + 25 + 50 = 100 s.
  const std::map<std::string, double> app_n = {{"s", 4.0}};
  std::map<std::string, Config> given;
  for (int k = 0; k < 4; ++k) given["s-" + std::to_string(k)] = Config{0, 1, 1};
  FairnessEstimate e = estimate_fairness(m, given, {}, app_n, 300);
  REQUIRE(e.apps.count("s"));
  CHECK(e.apps["s"].t_id == Approx(100));
  CHECK(e.apps["s"].t_sh == Approx(50 + 100));  // the same schedule on its 4 GPUs
  CHECK(e.jobs.count("s-0"));                   // each trial has its own figure too
  // Two GPUs between them: phase 1 in two waves (50 s), then 25 + 50.
  given.erase("s-2");
  given.erase("s-3");
  e = estimate_fairness(m, given, {}, app_n, 300);
  CHECK(e.apps["s"].t_sh == Approx(50 + 125));
  CHECK(e.apps["s"].rho() == Approx(1.75));
  // None: it waits the round, then runs on its fair share (4 GPUs).
  e = estimate_fairness(m, {}, {}, app_n, 300);
  CHECK(e.apps["s"].t_sh == Approx(50 + 300 + 100));
}

TEST_CASE("fairness estimate: a measured rate replaces the model's level", "[fairness]") {
  // The model says 8 iterations/s on the gang; the job's own reports say 2 (its script does
  // more per step than the catalog's model). Running alone on its gang (N_avg 1).
  const Cluster c = cluster_with({{"a", 4, 4}});
  GoodputMatrix m = matrix_of(c, {gang_job(c, "j", 8, {8.0}, 3000, 4000, 10000)});
  const Config gang{0, 2, 8};
  m.jobs[0].current = gang;
  FairnessEstimate e = estimate_fairness(m, {{"j", gang}}, {}, {}, 300);
  CHECK_FALSE(e.jobs["j"].measured);
  CHECK(e.jobs["j"].t_id == Approx(1250));                                // 10,000 / 8
  CHECK(e.jobs["j"].rho() == Approx(3000.0 / 1250 + 6000.0 / 8 / 1250));  // 3.0: "unfair"
  e = estimate_fairness(m, {{"j", gang}}, {}, {}, 300, {{"j", 2.0}});
  CHECK(e.jobs["j"].measured);
  CHECK(e.jobs["j"].t_id == Approx(5000));             // 10,000 / 2
  CHECK(e.jobs["j"].t_sh == Approx(3000 + 6000 / 2));  // its age plus the rest at 2/s
  CHECK(e.jobs["j"].rho() == Approx(1.2));
  // Not running anywhere (no current configuration): nothing to measure against.
  m.jobs[0].current.reset();
  CHECK_FALSE(estimate_fairness(m, {{"j", gang}}, {}, {}, 300, {{"j", 2.0}}).jobs["j"].measured);
}
