#include <catch2/catch.hpp>

#include "policy/successive_halving.hpp"

using namespace sia;

TEST_CASE("successive halving keeps the best trials at each rung", "[halving]") {
  SuccessiveHalving sh({AppSchedulerKind::successive_halving, 2, 3}, "loss", true);
  std::vector<TrialProgress> t{
      {"a", 0.25, 0.9}, {"b", 0.25, 0.3}, {"c", 0.1, 0.2}, {"d", 0.25, 0.5}};
  CHECK(sh.budget() == 0.25);
  CHECK(sh.close_phase(t).empty());  // c has not reached the rung
  CHECK(sh.phase() == 0);
  t[2].fraction = 0.25;
  auto stops = sh.close_phase(t);
  REQUIRE(stops.size() == 2);
  CHECK(stops[0].name == "d");
  CHECK(stops[1].name == "a");
  CHECK(stops[1].reason == "successive halving: phase 1 of 3, loss 0.9 ranked 4 of 4 (kept 2)");
  CHECK(sh.phase() == 1);
  CHECK(sh.budget() == 0.5);
  std::vector<TrialProgress> left{{"b", 0.5, 0.1}, {"c", 0.5, 0.15}};
  stops = sh.close_phase(left);
  REQUIRE(stops.size() == 1);
  CHECK(stops[0].name == "c");
  CHECK(sh.budget() == 1.0);
  CHECK_FALSE(sh.reached({"b", 0.99, 0.1}));
  CHECK(sh.close_phase({{"b", 1.0, 0.1}}).empty());  // the last phase trains to the end
}

TEST_CASE("successive halving ranks up for a maximised metric, unreported last", "[halving]") {
  SuccessiveHalving sh({AppSchedulerKind::successive_halving, 3, 2}, "accuracy", false);
  auto stops = sh.close_phase({{"a", 0.4, 0.7}, {"b", 0.4, std::nullopt}, {"c", 0.4, 0.9}});
  REQUIRE(stops.size() == 2);
  CHECK(stops[0].name == "a");
  CHECK(stops[1].name == "b");
  SuccessiveHalving none({}, "loss", true);
  CHECK(none.close_phase({{"a", 1.0, 0.1}, {"b", 1.0, 0.2}}).empty());
}
