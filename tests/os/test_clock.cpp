#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "os/clock.hpp"

using namespace sia::os;

TEST_CASE("seconds to a duration and back", "[os][clock]") {
  CHECK(span(1.5) == std::chrono::milliseconds(1500));
  CHECK(to_seconds(span(0.25)) == 0.25);
  // A sum computed in floating point lands on the instant it names.
  CHECK(span(0.1 + 0.2) == std::chrono::milliseconds(300));
  // Saturating: never a wrap into the past; NaN is nothing.
  CHECK(span(1e300) == span(1e9));
  CHECK(span(-1e300) == span(-1e9));
  CHECK(span(1e300) > std::chrono::hours(24 * 365 * 30));
  CHECK(span(std::numeric_limits<double>::quiet_NaN()) == Clock::Duration::zero());
  CHECK(fmt_seconds(2.46) == "2.5 s");
}

TEST_CASE("the system clock moves forward", "[os][clock]") {
  Clock& c = system_clock();
  auto t0 = c.now();
  double s0 = now_seconds();
  c.sleep_for(std::chrono::milliseconds(5));
  CHECK(c.now() - t0 >= std::chrono::milliseconds(5));
  CHECK(now_seconds() - s0 >= 0.005);
}
