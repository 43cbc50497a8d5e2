#include <catch2/catch.hpp>

#include <cmath>

#include "plot/scale.hpp"

using sia::plot::fitted_scale;
using sia::plot::format_number;
using sia::plot::make_scale;
using sia::plot::nice_step;

TEST_CASE("nice steps are 1, 2 or 5 times a power of ten", "[plot][scale]") {
  CHECK(nice_step(10, 5) == Approx(2));
  CHECK(nice_step(1, 4) == Approx(0.5));
  CHECK(nice_step(7, 10) == Approx(1));
  CHECK(nice_step(123, 5) == Approx(50));
  CHECK(nice_step(0, 5) == 1);  // no span: a step that divides nothing by zero
}

TEST_CASE("a linear scale widens the data to whole ticks", "[plot][scale]") {
  auto s = make_scale(0.3, 9.2, false, 0, 100, 6);
  CHECK(s.lo == Approx(0));
  CHECK(s.hi == Approx(10));
  REQUIRE(s.ticks.size() == 6);
  CHECK(s.ticks.front() == Approx(0));
  CHECK(s.ticks.back() == Approx(10));
  CHECK(s(0) == Approx(0));
  CHECK(s(10) == Approx(100));
  CHECK(s(5) == Approx(50));
  CHECK(s(-3) == Approx(0));  // clamped to the domain
  CHECK(s.label(4) == "4");
  auto f = make_scale(0, 1, false, 0, 100, 11);
  CHECK(f.label(f.ticks[1]) == "0.1");
}

TEST_CASE("a one-value or reversed interval never divides by zero", "[plot][scale]") {
  for (double v : {0.0, 5.0, -2.0, 1e-9}) {
    auto s = make_scale(v, v, false, 10, 110, 5);
    CHECK(s.hi > s.lo);
    CHECK(std::isfinite(s(v)));
    CHECK(s.ticks.size() >= 2);
  }
  auto r = make_scale(10, 0, false, 0, 100, 6);
  CHECK(r.lo == Approx(0));
  CHECK(r.hi == Approx(10));
  auto n = make_scale(NAN, INFINITY, false, 0, 100, 6);
  CHECK(std::isfinite(n(1)));
}

TEST_CASE("a log scale has powers of ten as ticks", "[plot][scale]") {
  auto s = make_scale(0.05, 300, true, 0, 400, 10);
  CHECK(s.lo == Approx(0.01));
  CHECK(s.hi == Approx(1000));
  CHECK(s.ticks.front() == Approx(0.01));
  CHECK(s.ticks.back() == Approx(1000));
  CHECK(s(1) == Approx(160));  // two decades of five
  CHECK(s.label(0.01) == "0.01");
  CHECK(s.label(1000) == "1000");
  // One decade: 1-2-5 ticks between.
  auto d = make_scale(1, 9, true, 0, 100, 10);
  REQUIRE(d.ticks.size() == 4);
  CHECK(d.ticks[1] == Approx(2));
  // A non-positive end is replaced rather than mapped to NaN.
  auto z = make_scale(0, 100, true, 0, 100, 6);
  CHECK(z.lo > 0);
  CHECK(std::isfinite(z(0)));
}

TEST_CASE("fitted scales keep tick labels apart", "[plot][scale]") {
  // 0 to 123456 on 200 pixels: labels of 6 characters at 7 px need ~54 px each.
  auto s = fitted_scale(0, 123456, false, 0, 200, true, 7, 12);
  for (std::size_t i = 1; i < s.ticks.size(); ++i) {
    const double room = s(s.ticks[i]) - s(s.ticks[i - 1]);
    CHECK(room >= s.label(s.ticks[i]).size() * 7 + 12);
  }
  auto v = fitted_scale(0, 100, false, 300, 0, false, 14, 10);
  CHECK(v.ticks.size() >= 3);
  CHECK(v.ticks.size() <= 13);
}

TEST_CASE("numbers are written for people", "[plot][scale]") {
  CHECK(format_number(2.50, 2) == "2.5");
  CHECK(format_number(3, 2) == "3");
  CHECK(format_number(-0.0001, 1) == "-1e-4");
  CHECK(format_number(-0.01, 1) == "0");  // no "-0"
  CHECK(format_number(2e7, 0) == "2e7");
  CHECK(format_number(NAN, 2) == "-");
}
