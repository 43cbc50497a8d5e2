#include <catch2/catch.hpp>

#include <cmath>
#include "sim/delaunay.hpp"
#include "sim/ground_truth.hpp"
#include "sim/sim_job.hpp"

#include "test_util.hpp"

using namespace sia;

TEST_CASE("Delaunay interpolation is exact on linear data and refuses to extrapolate",
          "[delaunay]") {
  std::vector<std::array<double, 3>> pts;
  std::vector<std::array<double, 2>> vals;
  for (int x = 0; x <= 3; ++x) {
    for (int y = 0; y <= 3; ++y) {
      for (int z = 0; z <= 3; ++z) {
        pts.push_back({double(x), double(y * 2), double(z * 10)});
        vals.push_back({1 + x + 0.5 * y * 2 + 0.1 * z * 10, 7.0});
      }
    }
  }
  LinearInterpolator3 f(pts, vals);
  CHECK(f.simplices() > 0);
  auto v = f.interpolate({1.3, 2.7, 14.0});
  REQUIRE(v);
  CHECK((*v)[0] == Approx(1 + 1.3 + 0.5 * 2.7 + 0.1 * 14.0));
  CHECK((*v)[1] == Approx(7.0));
  CHECK_FALSE(f.interpolate({4.5, 1, 1}));
}

// The Sia paper's simulator (Subramanya et al., SOSP '23): a fresh job on one GPU runs at B0 with
// no accumulation; progress per second is 1 / step time / slowdown.
TEST_CASE("ground truth matches the reference's hand-checkable vectors", "[ground_truth]") {
  Catalog c(test::catalog_dir());
  struct Row {
    const char* model;
    const char* type;
    int bsz;
    double step, sync, rate;
  };
  const Row rows[] = {
      {"cifar10", "rtx2080ti", 128, 0.07430361995571538, 0.00028880189148415076, 7.476830279421973},
      {"cifar10", "t4", 128, 0.10311532334277504, 0.0005253355733658137, 5.387710939030688},
      {"cifar10", "a100", 128, 0.03866601578499142, 0.0002799359986950692, 14.368057951582376},
      {"imagenet", "rtx2080ti", 200, 0.463215172290802, 0.000663863994181156, 1.7990199440405523},
      {"bert", "a100", 12, 0.16768729984760283, 0.0030863999873399733, 4.969567367896563}};
  for (const auto& r : rows) {
    INFO(r.model << " on " << r.type);
    const ModelInfo& m = c.get(r.model);
    GroundTruth g(m, *m.gpu(r.type));
    StepSync t = g.step_sync({1}, r.bsz);
    CHECK(t.step == Approx(r.step).epsilon(1e-12));
    CHECK(t.sync == Approx(r.sync).epsilon(1e-12));
    CHECK(1.0 / t.step / m.slowdown == Approx(r.rate).epsilon(1e-12));
  }
}

TEST_CASE("unprofiled placements interpolate; out of range is an error", "[ground_truth]") {
  Catalog c(test::catalog_dir());
  const ModelInfo& m = c.get("cifar10");
  GroundTruth rtx(m, *m.gpu("rtx2080ti"));
  // Three RTX nodes were never profiled as a placement: interpolated from the scalability
  // measurements, and close to the two-node figure per GPU.
  StepSync three = rtx.step_sync({8, 8, 8}, 128);
  StepSync two = rtx.step_sync({8, 8}, 128);
  CHECK(three.step > 0);
  CHECK(three.step == Approx(two.step).epsilon(0.5));
  // Rotations are the same placement.
  CHECK(rtx.step_sync({1, 3}, 64).step == rtx.step_sync({3, 1}, 64).step);
  CHECK(rtx.max_local_bsz({8}) == 1024);
  CHECK(test::error_of([&] { rtx.step_sync({1}, 100000); }).second.find("outside the profiled") !=
        std::string::npos);
  ValidationTruth v(m);
  CHECK(v.progress_at(100) == Approx(39062.90816659533));
  GradientStats a = v.grad_stats(128, 0), b = v.grad_stats(256, 0), mid = v.grad_stats(192, 0);
  CHECK(mid.sqr == Approx((a.sqr + b.sqr) / 2));
  CHECK(test::error_of([&] { v.grad_stats(64, 0); }).first == 70);
}

namespace {

// cifar10 on the bundled heterogeneous cluster, with its ground truth per type.
struct Cifar10 {
  Catalog c{test::catalog_dir()};
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  const ModelInfo& m = c.get("cifar10");
  TruthStore store;
  std::vector<GroundTruth*> truth;
  Cifar10() {
    for (const auto& t : cl.types) truth.push_back(store.truth(m, t.name));
  }
  // A job "cifar10-0" as the reference simulator runs it.
  SimJob job(JobState js) {
    js.spec.name = "cifar10-0";
    js.spec.model = "cifar10";
    return SimJob(js, m, truth, store.validation(m), cl, m.restart_cost,
                  sim_job_quirks(Compat::reference));
  }
};

}  // namespace

TEST_CASE("a simulated job: first chunk, epochs, restarts, restore delays", "[sim_job]") {
  Cifar10 f;
  Estimator est(f.cl, f.c, estimator_options(Compat::reference));
  SimJob job = f.job(JobState{});
  job.step(60, est);  // not placed: nothing happens
  CHECK(job.progress() == 0);
  CHECK_FALSE(job.started());
  job.apply(2, {1}, true, est);  // one RTX 2080 Ti
  CHECK(job.started());
  CHECK(job.restarts() == 0);  // the first start is not a restart
  CHECK(job.local_bsz() == 128);
  CHECK(job.accum_steps() == 0);
  CHECK(job.restore_left() == 50);  // cifar10's checkpoint-restore
  job.step(60, est);
  // 50 s restoring, then 10 s at the reference rate.
  CHECK(job.progress() == Approx(10 * 7.476830279421973).epsilon(1e-9));
  CHECK(job.gpu_seconds_by_type()[2] == Approx(60));
  // A move to another shape restarts it and charges the delay again.
  job.apply(2, {2}, true, est);
  CHECK(job.restarts() == 1);
  CHECK(job.restore_left() == 50);
  // The same shape elsewhere (reference semantics: tuple unchanged) costs nothing.
  job.apply(2, {2}, false, est);
  CHECK(job.restarts() == 1);
  // Suspension and resumption.
  job.apply(-1, {}, false, est);
  CHECK(job.gpus() == 0);
  job.apply(1, {1}, true, est);
  CHECK(job.restarts() == 2);
  // Run to the end: completion is at an integer second.
  for (int r = 0; r < 2000 && !job.completed(); ++r) job.step(60, est);
  REQUIRE(job.completed());
  CHECK(*job.completion_time() == std::floor(*job.completion_time()));
  CHECK(job.epoch() == 100);
}

// Under --compat reference the simulator shows gavel the true throughput of each tuned
// configuration, as the artifact's Gavel reads it from the measured tables.
TEST_CASE("a rigid job's true throughputs, for the reference Gavel", "[sim_job]") {
  Cifar10 f;
  const ModelInfo& m = f.m;
  const Cluster& cl = f.cl;
  const auto& truth = f.truth;
  JobState js;
  js.spec.gpus = 4;
  js.spec.batch_size = 2048;
  js.spec.adaptivity = Adaptivity::rigid;
  SimJob job = f.job(js);

  GoodputRow row;
  row.job = "cifar10-0";
  row.fixed_gpus = 4;
  row.fixed_batch = 2048;
  for (int t = 0; t < static_cast<int>(cl.types.size()); ++t) {
    GoodputEntry e;
    e.config = Config{t, 1, 4};
    e.throughput = 1;  // the estimate, replaced
    row.fixed.push_back(e);
  }
  job.show_true_rates(row);
  // On the T4s (4 per node) the gang is one whole node; 512 samples per GPU fit in memory
  // there, so no accumulation: one iteration per step time, divided by the slowdown.
  REQUIRE(truth[0]->max_local_bsz({4}) >= 512);
  REQUIRE(m.max_batch_size >= 2048);
  const double step = truth[0]->step_sync({4}, 512).step;
  CHECK(row.fixed[0].throughput == Approx(2048 / step / m.slowdown).epsilon(1e-12));
  for (const auto& e : row.fixed) CHECK(e.throughput != 1);

  // And the job runs there with that split.
  Estimator est(cl, f.c, estimator_options(Compat::reference));
  job.apply(0, {4}, true, est);
  CHECK(job.local_bsz() == 512);
  CHECK(job.accum_steps() == 0);
}

TEST_CASE("sim job quirks: the default profile has none, the reference profile all", "[sim_job]") {
  CHECK_FALSE(sim_job_quirks(Compat::standard).zero_restart_cost_is_30s);
  CHECK(sim_job_quirks(Compat::reference).zero_restart_cost_is_30s);
  STATIC_REQUIRE(sizeof(SimJobQuirks) == sizeof(bool));  // a new flag: add it above
}
