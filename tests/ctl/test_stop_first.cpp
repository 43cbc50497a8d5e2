#include <catch2/catch.hpp>

#include "ctl/stop_first.hpp"

using sia::JobPlacement;
using sia::ctl::stop_first;

namespace {

JobPlacement on(std::vector<std::pair<std::string, std::vector<int>>> nodes, bool restart) {
  JobPlacement jp;
  jp.job = "x";
  for (auto& [n, g] : nodes) jp.nodes.push_back({n, g});
  jp.restart = restart;
  return jp;
}

}  // namespace

TEST_CASE("stop_first: a job not running anywhere starts at once", "[stop_first]") {
  CHECK_FALSE(stop_first({}, on({{"a", {0}}, {"b", {0}}}, true)));
}

TEST_CASE("stop_first: across nodes, a new generation stops everywhere first", "[stop_first]") {
  // Moved from a to b; moved from {a, b} to {b, c} (b runs it and keeps it); grown from a
  // onto b; shrunk from {a, b} onto a.
  CHECK(stop_first({"a"}, on({{"b", {0}}}, true)));
  CHECK(stop_first({"a", "b"}, on({{"b", {0, 1}}, {"c", {0, 1}}}, true)));
  CHECK(stop_first({"a"}, on({{"a", {0, 1}}, {"b", {0, 1}}}, true)));
  CHECK(stop_first({"a", "b"}, on({{"a", {0, 1}}}, true)));
  // The same two nodes with a new shape: each would restart its ranks on its own.
  CHECK(stop_first({"a", "b"}, on({{"a", {0}}, {"b", {0}}}, true)));
  // Running on only one of its two nodes (the other's ranks ended), a new attempt.
  CHECK(stop_first({"b"}, on({{"a", {0}}, {"b", {0}}}, true)));
}

TEST_CASE("stop_first: a job that keeps its nodes, or stays on one node, goes at once",
          "[stop_first]") {
  CHECK_FALSE(stop_first({"a", "b"}, on({{"a", {0}}, {"b", {0}}}, false)));  // kept (batch)
  CHECK_FALSE(stop_first({"a"}, on({{"a", {0, 1}}}, true)));  // one node restarts in order
  // Running on one of its two nodes, the other's ranks ended (they lost their peers), no new
  // attempt yet: the running node goes on -- stopping it every round would start a new
  // generation there every round, and the job never learns its fate.
  CHECK_FALSE(stop_first({"b"}, on({{"a", {0}}, {"b", {0}}}, false)));
}
