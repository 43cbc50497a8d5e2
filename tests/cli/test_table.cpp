#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "cli/table.hpp"

using namespace sia;

TEST_CASE("durations and times people can read; the rest is '-'", "[cli]") {
  CHECK(cli::duration(42) == "42s");
  CHECK(cli::duration(200) == "3m20s");
  CHECK(cli::duration(7500) == "2h05m");
  CHECK(cli::duration(97200) == "1d03h");
  CHECK(cli::utc_time(1796169899) == "2026-12-02T00:04:59Z");
  // Found by fuzz/snapshot: a snapshot's time of 2^63 s was cast to time_t (undefined).
  for (double v : {9.223372036854775808e18, -1e300, 1e16, std::nan(""),
                   std::numeric_limits<double>::infinity()}) {
    CHECK(cli::duration(v) == "-");
    CHECK(cli::utc_time(v) == "-");
  }
}

TEST_CASE("fixed point stays narrow for absurd numbers", "[cli]") {
  CHECK(cli::fixed(1.5, 2) == "1.50");
  CHECK(cli::fixed(-3, 1) == "-3.0");
  CHECK(cli::fixed(123456789012345.0, 1) == "123456789012345.0");
  CHECK(cli::fixed(1e300, 1) == "1e+300");
  CHECK(cli::fixed(-1e16, 1) == "-1e+16");
  CHECK(cli::fixed(std::numeric_limits<double>::infinity(), 1) == "inf");
  CHECK(cli::fixed(std::nan(""), 1) == "-");
}
