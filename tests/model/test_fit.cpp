#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <thread>

#include "model/fit.hpp"

using namespace sia;

static std::vector<FitPoint> synthetic(const PerfParams& p, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  std::vector<FitPoint> pts;
  const int shapes[][2] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 8}, {2, 16}, {3, 24}, {4, 32}};
  for (auto [nodes, reps] : shapes) {
    for (double b : {16.0, 32.0, 64.0, 128.0}) {
      double tc = compute_time(p, b) * std::exp(n(rng));
      double ts = optim_time(p, nodes, reps, b) * std::exp(n(rng));
      pts.push_back({nodes, reps, b, tc, std::max(ts, tc * 1.0001)});
    }
  }
  return pts;
}

TEST_CASE("the analytic gradient matches finite differences", "[fit]") {
  PerfParams truth{0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.7};
  auto pts = synthetic(truth, 0.05, 1);
  std::array<std::array<double, 7>, 3> probes = {
      truth.to_array(), std::array<double, 7>{0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001},
      std::array<double, 7>{0.005, 0.0003, 0.2, 0.02, 0.03, 0.001, 4.0}};
  for (const auto& p : probes) {
    std::array<double, 7> g{};
    fit_loss(p, pts, &g);
    for (int i = 0; i < 7; ++i) {
      double h = 1e-6 * std::max(1e-3, std::fabs(p[i]));
      auto up = p, dn = p;
      up[i] += h;
      dn[i] -= h;
      double fd = (fit_loss(up, pts, nullptr) - fit_loss(dn, pts, nullptr)) / (2 * h);
      INFO("parameter " << i);
      CHECK(g[i] == Approx(fd).epsilon(1e-4).margin(1e-6));
    }
  }
}

TEST_CASE("fitting recovers the iteration times it was fitted to", "[fit]") {
  PerfParams truth{0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.7};
  auto pts = synthetic(truth, 0.0, 2);
  PerfParams fit = fit_perf_params(pts);
  for (const auto& p : pts) {
    CHECK(optim_time(fit, p.nodes, p.replicas, p.local_bsz) == Approx(p.step_time).epsilon(0.03));
    CHECK(compute_time(fit, p.local_bsz) == Approx(p.compute_time).epsilon(0.03));
  }
}

TEST_CASE("parameters the data cannot identify are frozen", "[fit]") {
  // Single-GPU data at one batch size: alpha_c = mean/2, network terms at 1e-8, so the
  // model predicts perfect scaling (the bootstrap assumption).
  std::vector<FitPoint> one = {{1, 1, 32, 0.10, 0.101}, {1, 1, 32, 0.12, 0.121}};
  PerfParams p = fit_perf_params(one);
  CHECK(p.alpha_c == Approx(0.055));
  CHECK(p.alpha_n == Approx(1e-8 * 1.1).margin(1e-12));
  CHECK(p.beta_r == Approx(1e-8).margin(1e-12));
  CHECK(throughput(p, 2, 8, 32, 0) == Approx(8 * throughput(p, 1, 1, 32, 0)).epsilon(1e-6));
  // One-node multi-GPU data only: the prior puts inter-node above intra-node terms.
  std::vector<FitPoint> intra = {{1, 1, 32, 0.1, 0.101},
                                 {1, 1, 64, 0.18, 0.181},
                                 {1, 2, 32, 0.1, 0.13},
                                 {1, 4, 32, 0.1, 0.15},
                                 {1, 4, 64, 0.18, 0.21}};
  PerfParams q = fit_perf_params(intra);
  CHECK(q.alpha_n >= 1.1 * q.alpha_r * 0.999999);
  CHECK(q.beta_n >= 1.1 * q.beta_r * 0.999999);
  CHECK(q.gamma >= 1.0);
  CHECK(q.gamma <= 10.0);
}

TEST_CASE("a memoised fit is the fit: same points, same parameters, from any thread", "[fit]") {
  PerfParams truth{0.02, 0.001, 0.05, 0.004, 0.01, 0.002, 1.7};
  auto pts = synthetic(truth, 0.05, 7);
  const PerfParams first = fit_perf_params(pts);
  auto changed = pts;
  changed.back().step_time *= 1.5;  // one measurement differs: a fit of its own
  const PerfParams other = fit_perf_params(changed);
  CHECK_FALSE(other == first);
  PerfParams again;
  std::thread([&] { again = fit_perf_params(pts); }).join();
  CHECK(again == first);
  // Order is part of the input (the loss sums in order): reversed points are fitted anew,
  // and agree closely.
  std::vector<FitPoint> reversed(pts.rbegin(), pts.rend());
  const PerfParams back = fit_perf_params(reversed);
  CHECK(back.alpha_c == Approx(first.alpha_c).epsilon(1e-3));
  CHECK(back.gamma == Approx(first.gamma).epsilon(1e-3));
}
