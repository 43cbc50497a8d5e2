// Themis' state between rounds to text and back (lib/policy/themis_state.hpp).
#include <catch2/catch.hpp>

#include "policy/themis_state.hpp"
#include "test_util.hpp"
#include "themis_rows.hpp"

using namespace sia;
using themis_test::cluster_with;

TEST_CASE("themis state: text and back keep every field", "[themis]") {
  const Cluster cluster = cluster_with({{"t4", 2, 4}, {"v100", 1, 8}});
  themis::State s;
  s.round = 17;
  s.jobs["a"].contention_sum = 12.5;
  s.jobs["a"].rounds = 5;
  s.jobs["a"].lease = themis::Lease{"v100", 1, 8, 14, 19, 0.75, "auction"};
  s.jobs["b"].contention_sum = 3;
  s.jobs["b"].rounds = 1;
  const themis::State back = themis::state_from_text(themis::state_to_text(s, cluster), cluster);
  CHECK(back.round == 17);
  REQUIRE(back.jobs.size() == 2);
  CHECK(back.jobs.at("a").contention_sum == 12.5);
  CHECK(back.jobs.at("a").rounds == 5);
  REQUIRE(back.jobs.at("a").lease);
  const themis::Lease& l = *back.jobs.at("a").lease;
  CHECK(l.gpu_type == "v100");
  CHECK(l.nodes == 1);
  CHECK(l.gpus == 8);
  CHECK(l.start == 14);
  CHECK(l.end == 19);
  CHECK(l.payment == 0.75);
  CHECK(l.how == "auction");
  CHECK_FALSE(back.jobs.at("b").lease);
  CHECK_FALSE(back.placement);
}

TEST_CASE("themis state: a missing or mistyped field is bad data naming it", "[themis]") {
  const Cluster cluster = cluster_with({{"t4", 1, 4}});
  auto error = [&](const std::string& text) {
    return test::error_of([&] { themis::state_from_text(text, cluster); });
  };
  auto [status, message] = error(R"({"round":2,"jobs":{"a":{"rounds":1}}})");
  CHECK(status == 65);
  CHECK(message.find("policy_state.jobs.a.contention_sum") != std::string::npos);
  std::tie(status, message) = error(R"({"round":2,"jobs":[]})");
  CHECK(status == 65);
  CHECK(message.find("policy_state.jobs") != std::string::npos);
  std::tie(status, message) = error("not json");
  CHECK(status == 65);
  CHECK(message.find("not a themis state") != std::string::npos);
}
