#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "worker/grad_stats.hpp"
#include "worker/rng.hpp"

using namespace sia::worker;

TEST_CASE("the estimator on a hand-checked pair of replicas", "[worker][gns]") {
  // g1 = (3, 1), g2 = (1, 1): local_sqr = (10 + 2) / 2 = 6; mean (2, 1): total_sqr = 5.
  // grad_sqr = (2 * 5 - 6) / 1 = 4; grad_var = (6 - 5) * scale / 1.
  // Each g_i is over 8 samples and B0 = 4: scale = 2 * 8 / 4 = 4.
  GradientSample s = estimate_gradient(6, 5, 2, 4);
  CHECK(s.sqr == Approx(4));
  CHECK(s.var == Approx(4));
  // Four replicas (1,0), (0,1), (-1,0), (0,-1), each over B0 samples (scale 4): mean 0,
  // local_sqr 1 -> sqr (0 - 1) / 3 = -1/3, var (1 - 0) * 4 / 3 = 4/3.
  s = estimate_gradient(1, 0, 4, 4);
  CHECK(s.sqr == Approx(-1.0 / 3));
  CHECK(s.var == Approx(4.0 / 3));
}

TEST_CASE("smoothing is bias-corrected and the first estimate is exact", "[worker][gns]") {
  GradientNoiseScale g;
  CHECK_FALSE(g.estimate());
  CHECK(g.gain(64, 32) == 1.0);
  g.update(6, 5, 2, 1);  // sqr 4, var 1
  REQUIRE(g.estimate());
  CHECK(g.estimate()->sqr == Approx(4));
  CHECK(g.estimate()->var == Approx(1));
  g.update(5, 2, 2, 1);  // sqr -1, var 3
  const double theta = 0.999;
  CHECK(g.estimate()->sqr == Approx(std::max(0.0, (theta * 4 - 1) / (theta + 1))));
  CHECK(g.estimate()->var == Approx((theta * 1 + 3) / (theta + 1)));
  // gain at k = 2 with sqr s, var v: (v + s) / (v / 2 + s).
  const double s = g.estimate()->sqr, v = g.estimate()->var;
  CHECK(g.gain(64, 32) == Approx((v + s) / (v / 2 + s)));
  CHECK(g.gain(32, 32) == Approx(1));
}

TEST_CASE("a negative squared norm is reported as zero", "[worker][gns]") {
  GradientNoiseScale g;
  g.update(1, 0, 4, 4);  // sqr -1/3, var 4/3
  CHECK(g.estimate()->sqr == 0);
  CHECK(g.estimate()->var == Approx(4.0 / 3));
  CHECK(g.gain(8, 1) == Approx(8));  // pure noise: perfect scaling
}

TEST_CASE("pair estimates from consecutive single gradients", "[worker][gns]") {
  GradientNoiseScale g;
  g.note_unpaired();
  CHECK_FALSE(g.estimate());
  // g_prev = (3, 1), g = (1, 1): as two replicas, each over local_bsz = B0 (scale 2).
  g.update_pair(10, 2, 5, 1);
  CHECK(g.state().pair);
  CHECK(g.estimate()->sqr == Approx(4));
  CHECK(g.estimate()->var == Approx(2));
  // Replica estimates replace pair ones: the average restarts.
  g.update(6, 5, 2, 4);
  CHECK_FALSE(g.state().pair);
  CHECK(g.estimate()->sqr == Approx(4));
  CHECK(g.estimate()->var == Approx(4));
}

TEST_CASE("the estimator recovers |G|^2 and tr(Sigma)/B0 of simulated gradients", "[worker][gns]") {
  // Per-sample gradients G + e with e ~ N(0, I) in d = 10: tr(Sigma) = 10. Replicas average
  // b = 4 samples; with R = 4 replicas and B0 = 8 the estimator should find |G|^2 and 10 / 8.
  const int d = 10, b = 4, replicas = 4;
  const double b0 = 8;
  std::vector<double> G(d);
  double g2 = 0;
  for (int j = 0; j < d; ++j) {
    G[j] = 0.1 * (j + 1);
    g2 += G[j] * G[j];
  }
  Rng rng(42);
  double sum_sqr = 0, sum_var = 0;
  const int steps = 4000;
  for (int t = 0; t < steps; ++t) {
    std::vector<double> mean(d, 0.0);
    double local = 0;
    for (int r = 0; r < replicas; ++r) {
      double sq = 0;
      for (int j = 0; j < d; ++j) {
        double gi = G[j];
        for (int k = 0; k < b; ++k) gi += rng.normal() / b;
        sq += gi * gi;
        mean[j] += gi / replicas;
      }
      local += sq / replicas;
    }
    double total = 0;
    for (double m : mean) total += m * m;
    GradientSample s = estimate_gradient(local, total, replicas, replicas * b / b0);
    sum_sqr += s.sqr;
    sum_var += s.var;
  }
  CHECK(sum_sqr / steps == Approx(g2).epsilon(0.05));
  CHECK(sum_var / steps == Approx(10.0 / b0).epsilon(0.05));
}
