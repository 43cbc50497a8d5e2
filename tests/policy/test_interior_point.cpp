// The assignment LP's interior point (lib/policy/interior_point.hpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "policy/interior_point.hpp"

using namespace sia::baseline;

TEST_CASE("interior point: the analytic centre of an optimal face that is not symmetric",
          "[interior_point]") {
  // One type of 4 GPUs; J0 takes 2 GPUs at value 1, J1 4 GPUs at value 2: the same value
  // per GPU, so every x with 2 x0 + 4 x1 = 4, 0 <= x <= 1 is optimal (x1 = 1 - x0 / 2).
  // The centre maximises log x0 + log(1 - x0) + log x1 + log(1 - x1) on that segment:
  // 2 / x0 = 1 / (1 - x0) + 1 / (2 - x0), solved here by bisection.
  AssignmentLp lp;
  lp.jobs = 2;
  lp.capacity = {4};
  lp.columns = {{0, 0, 2, 1}, {1, 0, 4, 2}};
  auto x = central_optimum(lp, 10);
  REQUIRE(x);
  REQUIRE(x->size() == 2);
  double lo = 0.01, hi = 0.99;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (2 / mid - 1 / (1 - mid) - 1 / (2 - mid) > 0 ? lo : hi) = mid;
  }
  CHECK((*x)[0] == Approx(lo).margin(1e-7));
  CHECK((*x)[1] == Approx(1 - lo / 2).margin(1e-7));
  CHECK(2 * (*x)[0] + 4 * (*x)[1] == Approx(4).margin(1e-8));  // the optimum
}

TEST_CASE("interior point: a unique optimum, columns the optimum leaves out, no time",
          "[interior_point]") {
  // Two types, one job worth 3 on type 0 and 1 on type 1: all its time on type 0.
  AssignmentLp lp;
  lp.jobs = 1;
  lp.capacity = {8, 8};
  lp.columns = {{0, 0, 4, 3}, {0, 1, 4, 1}};
  auto x = central_optimum(lp, 10);
  REQUIRE(x);
  CHECK((*x)[0] == Approx(1).margin(1e-7));
  CHECK((*x)[1] == Approx(0).margin(1e-7));

  // A job with no columns, a type nobody can use, an objective of zeros: the centre of the
  // whole polytope, where 1 / x = 1 / (1 - x) + 1 / (4 - x) (x, the job row's slack and the
  // type row's slack balance): 3 x^2 - 10 x + 4 = 0, x = (10 - sqrt(52)) / 6.
  AssignmentLp flat;
  flat.jobs = 2;
  flat.capacity = {4, 4};
  flat.columns = {{1, 0, 1, 0}};
  auto y = central_optimum(flat, 10);
  REQUIRE(y);
  CHECK((*y)[0] == Approx((10 - std::sqrt(52.0)) / 6).margin(1e-7));

  CHECK(central_optimum(AssignmentLp{}, 10)->empty());
  CHECK_FALSE(central_optimum(lp, 0));  // out of time: the caller falls back
}
