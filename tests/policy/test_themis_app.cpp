#include <catch2/catch.hpp>

#include <cmath>

#include "policy/themis_app.hpp"

using namespace sia;

// Themis §4.3.2's example: an app of 4 jobs run with successive halving in 3 phases of 4, 2
// and 1 jobs, on a 16-GPU cluster, an 8-GPU largest demand (2 GPUs per job), serial
// iteration times of 80, 100, 100 and 120 s (median 100 s) and a budget of 10,000 GPU-seconds
// per job and phase (100 iterations at the median). Alone on its share min(16 / 1, 8) = 8
// GPUs it runs its 4 jobs at once: T_id = 3 phases x 100 iterations x 100 s / 2 = 15,000 s.
TEST_CASE("Themis' multi-job app example: the app's rho and bid", "[themis][app]") {
  ThemisApp app;
  app.phase_jobs = {4, 2, 1};
  app.phase_budget = {100, 200, 300};
  app.phase = 0;
  app.done = {0, 0, 0, 0};
  app.serial_iter = {80, 100, 100, 120};
  app.gpus_per_trial = 2;
  app.elapsed = 0;
  CHECK(themis_app_ideal_time(app, 16, 1, 8) == Approx(15000));
  // The bid table of an app that holds nothing yet: one rho per allocation size.
  CHECK(themis_app_rho(app, 8, 16, 1, 8) == Approx(1.0));              // 4 jobs at once
  CHECK(themis_app_rho(app, 4, 16, 1, 8) == Approx(20000.0 / 15000));  // 2 waves, then 1 + 1
  CHECK(themis_app_rho(app, 2, 16, 1, 8) == Approx(35000.0 / 15000));  // one job at a time
  CHECK(std::isinf(themis_app_rho(app, 1, 16, 1, 8)));                 // less than a job's gang
  // More GPUs than the app can use do not help: 16 GPUs still run 8 trials' worth at most.
  CHECK(themis_app_rho(app, 16, 16, 1, 8) == Approx(1.0));
  // N_avg = 4 gives a share of 4 GPUs: T_id = 2 waves x 5,000 s + 5,000 s + 5,000 s.
  CHECK(themis_app_ideal_time(app, 16, 4, 8) == Approx(20000));
  // A bid's value is ln(rho_old / rho_new): 4 more GPUs for an app on 4 are worth ln(4/3).
  const double gain = std::log(themis_app_rho(app, 4, 16, 1, 8) / themis_app_rho(app, 8, 16, 1, 8));
  CHECK(gain == Approx(std::log(4.0 / 3)));

  // 3,000 s later, in phase 2 with the two survivors (serial 100 and 120 s, median 110) at
  // 150 and 120 of 200 iterations: on 4 GPUs the current phase takes max(130 / 2, 80) x 55 s,
  // the last 100 x 55 s; T_id = 3 x 100 x 55 s.
  app.phase = 1;
  app.done = {150, 120};
  app.serial_iter = {100, 120};
  app.elapsed = 3000;
  CHECK(themis_app_shared_time(app, 4) == Approx(3000 + 80 * 55 + 100 * 55));
  CHECK(themis_app_rho(app, 4, 16, 1, 8) == Approx(12900.0 / 16500));
  // On 2 GPUs the survivors run one after the other: 130 x 55 s.
  CHECK(themis_app_shared_time(app, 2) == Approx(3000 + 130 * 55 + 100 * 55));
}

// A hyperband app: its brackets' current phases share the GPUs; their later phases add up.
TEST_CASE("a hyperband app's estimate adds its brackets' schedules", "[themis][app]") {
  ThemisApp app;
  app.phase_jobs = {4, 2, 1};
  app.phase_budget = {100, 200, 300};
  app.done = {0, 0, 0, 0};
  app.serial_iter = {80, 100, 100, 120};
  app.gpus_per_trial = 2;
  const double one = themis_app_remaining(app, 8);  // 5,000 s now + 10,000 s later
  CHECK(one == Approx(15000));
  app.more_brackets.push_back(app);  // a second bracket like the first
  // 8 trials of 100 iterations on 4 slots: 200 x 50 s now, then both brackets' later phases.
  CHECK(themis_app_remaining(app, 8) == Approx(10000 + 2 * 10000));
  CHECK(themis_app_ideal_time(app, 16, 1, 8) == Approx(2 * 15000));
  // A bracket with one phase left and one trial (no later phases) adds only its work now.
  ThemisApp lone = app;
  lone.more_brackets = {ThemisPhases{{1}, {300}, 0, {200}}};
  CHECK(themis_app_remaining(lone, 8) == Approx(std::max(500.0 / 4, 100.0) * 50 + 10000));
}
