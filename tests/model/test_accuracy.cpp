#include <catch2/catch.hpp>

#include <cmath>

#include "model/accuracy.hpp"
#include "model/fit.hpp"
#include "test_util.hpp"

using namespace sia;

// The figures themselves are printed by bench/model_accuracy; these bounds catch a model
// or fitting regression on the real measurements.
TEST_CASE("fitted on 1-2 GPUs, the model predicts larger placements", "[accuracy]") {
  Catalog c(test::catalog_dir());
  for (const char* name : {"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"}) {
    auto results = fit_accuracy(c.get(name));
    REQUIRE(results.size() == 6);
    std::vector<double> pooled;
    for (const auto& r : results) pooled.insert(pooled.end(), r.errors.begin(), r.errors.end());
    INFO(name);
    CHECK(nearest_rank(pooled, 50) < 0.35);
    CHECK(nearest_rank(pooled, 90) < 0.65);
  }
}

TEST_CASE("fitted on all placements, the model reproduces them", "[accuracy]") {
  Catalog c(test::catalog_dir());
  const ModelGpu& g = *c.get("cifar10").gpu("a100");
  std::vector<FitPoint> pts;
  for (const auto& r : g.placements) {
    pts.push_back(
        {r.nodes, r.replicas, double(r.local_bsz), r.step_time - r.sync_time, r.step_time});
  }
  PerfParams p = fit_perf_params(pts);
  std::vector<double> err;
  for (const auto& r : g.placements) {
    err.push_back(std::fabs(optim_time(p, r.nodes, r.replicas, r.local_bsz) - r.step_time) /
                  r.step_time);
  }
  CHECK(nearest_rank(err, 50) < 0.08);
}

TEST_CASE("bootstrapped projections stay within bounds", "[accuracy]") {
  Catalog c(test::catalog_dir());
  auto r = bootstrap_accuracy(c.get("imagenet"), "a100", "t4");
  REQUIRE(r.errors.size() > 100);
  CHECK(r.median() < 0.35);
  CHECK(nearest_rank({0.3, 0.1, 0.2}, 50) == 0.2);
  CHECK(nearest_rank({}, 50) == 0);
}
