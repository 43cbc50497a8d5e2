#include <catch2/catch.hpp>

#include "ctl/client_backend.hpp"
#include "ctl/round_engine.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
namespace ct = sia::ctl::test;

namespace {

// The reservation of the fixture's cluster (two nodes of two t4s): it owns one node's GPUs
// and holds `held` of them.
std::string reservation(int held) {
  return "[[reservation]]\ngpu_type = \"t4\"\ngpus = 2\nsteps = [{at = 0, gpus = " +
         std::to_string(held) + "}]\n";
}

std::set<std::string> nodes_used(const Placement& p) {
  std::set<std::string> out;
  for (const auto& j : p.jobs) {
    for (const auto& n : j.nodes) out.insert(n.node);
  }
  return out;
}

}  // namespace

TEST_CASE("a reservation grown mid-run takes a node back from its jobs", "[round][reservation]") {
  ct::TempDir dir;
  const std::string file = dir / "reservations.toml";
  ct::write_text(file, reservation(0));
  ct::RoundFixture f({{"controller.reservations", file}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a", 1), ct::spec("b", 1), ct::spec("c", 1), ct::spec("d", 1)});

  json r1 = f.round();  // lent: the four jobs fill both nodes
  CHECK(r1["reserved"] == json::array());
  CHECK(r1["taken_back"] == json::array());
  CHECK(nodes_used(f.driver.deliveries.back().second) == std::set<std::string>{"t4-0", "t4-1"});

  // Grown: one node, whose two jobs are stopped (the other two keep theirs).
  ct::write_text(file, reservation(2));
  json r2 = f.round();
  REQUIRE(r2["reserved"].size() == 1);
  const std::string reserved = r2["reserved"][0];
  REQUIRE(r2["taken_back"].size() == 1);
  CHECK(r2["taken_back"][0]["node"] == reserved);
  CHECK(r2["taken_back"][0]["jobs"].size() == 2);
  CHECK(r2["taken_back"][0]["gpus"] == 2);
  CHECK(nodes_used(f.driver.deliveries.back().second).count(reserved) == 0);
  CHECK(std::any_of(f.warnings.begin(), f.warnings.end(), [&](const std::string& w) {
    return w == "node " + reserved +
                    ": taken back for a reservation; checkpoint-stopping 2 job(s) on it";
  }));

  // Held: the same node, nothing more taken back.
  json r3 = f.round();
  CHECK(r3["reserved"] == json::array({reserved}));
  CHECK(r3["taken_back"] == json::array());
  CHECK(nodes_used(f.driver.deliveries.back().second).count(reserved) == 0);

  // A bad file: the round ends with 78 before journaling anything.
  ct::write_text(file, "[[reservation]]\ngpu_type = \"t4\"\ngpus = 8\n");
  const std::int64_t before = f.book().round();
  auto [status, message] = sia::test::error_of([&] { f.round(); });
  CHECK(status == 78);
  CHECK(message ==
        file + ": reservation[0].gpus: the reservations of t4 own 8 GPUs, more than its 4");
  CHECK(f.book().round() == before);

  // Lent again: both nodes.
  ct::write_text(file, reservation(0));
  json r5 = f.round();
  CHECK(r5["reserved"] == json::array());
  CHECK(nodes_used(f.driver.deliveries.back().second) == std::set<std::string>{"t4-0", "t4-1"});
}
