#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <string>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "ctl/command_driver.hpp"
#include "ctl_test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using sia::ctl::test::TempDir;
using sia::ctl::test::write_text;

namespace {

// Node commands played by tests/data/ctl/fake_node.sh (idle nodes), one of which
// misbehaves as a file in `dir` says.
struct FakeNodes {
  TempDir dir;
  std::string cluster_file = sia::ctl::test::write_cluster(dir);
  Cluster cluster = read_cluster(cluster_file);
  std::string script = std::string(SIA_TEST_SOURCE_DIR) + "/tests/data/ctl/fake_node.sh";
  FakeNodes() {
    ::mkdir((dir / "state").c_str(), 0755);
    ::mkdir((dir / "state/run").c_str(), 0755);
  }
  // Node `node`'s `mode` command misbehaves as `how` says.
  void misbehave(const std::string& node, const std::string& mode, const std::string& how) {
    write_text(dir / (node + "." + mode), how);
  }
  CommandDriver driver() {
    NodeCommandSettings t;
    for (auto* cmd : {&t.status, &t.reports, &t.apply}) {
      const char* mode = cmd == &t.status ? "status" : cmd == &t.reports ? "reports" : "apply";
      *cmd = {script, mode, "{node}", dir.path()};
    }
    t.timeout = 120;
    return CommandDriver(cluster, cluster_file, dir / "state", t, nullptr);
  }
};

}  // namespace

TEST_CASE("a node whose status output is empty or oversized is down; the others are up",
          "[command_driver]") {
  FakeNodes f;
  const std::string bad = f.cluster.nodes.at(1).name, good = f.cluster.nodes.at(0).name;
  SECTION("oversized") {
    f.misbehave(bad, "status", "huge");
    CommandDriver d = f.driver();
    std::vector<NodeStatus> s = d.observe();
    REQUIRE(s.size() == 2);
    CHECK(s[0].ok);
    CHECK(!s[1].ok);
    CHECK(s[1].node == bad);
    CHECK(s[1].error == "printed more than 64 MiB on standard output (the limit); stopped");
    CHECK(d.nodes_up() == std::vector<std::string>{good});
  }
  SECTION("empty") {
    f.misbehave(bad, "status", "empty");
    CommandDriver d = f.driver();
    std::vector<NodeStatus> s = d.observe();
    CHECK(s[0].ok);
    CHECK(!s[1].ok);
    CHECK(s[1].error == "node " + bad + ": status: empty input, expected a sia document");
    CHECK(d.nodes_up() == std::vector<std::string>{good});
  }
}

TEST_CASE("oversized reports are that node's warning only", "[command_driver]") {
  FakeNodes f;
  const std::string bad = f.cluster.nodes.at(1).name;
  f.misbehave(bad, "reports", "huge");
  CommandDriver d = f.driver();
  CHECK(d.drain_reports().empty());  // the good node has none to give
  std::vector<std::string> w = d.take_warnings();
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "node " + bad +
                    ": reports: printed more than 64 MiB on standard output (the limit); stopped");
}

TEST_CASE("an empty or oversized apply output leaves that node unacknowledged only",
          "[command_driver]") {
  FakeNodes f;
  const std::string bad = f.cluster.nodes.at(1).name;
  const std::string how = GENERATE(std::string("empty"), std::string("huge"));
  f.misbehave(bad, "apply", how);
  CommandDriver d = f.driver();
  std::vector<NodeResult> r = d.deliver(1, Placement{}, nlohmann::json::object());
  REQUIRE(r.size() == 2);
  CHECK(r[0].acknowledged);
  CHECK(r[0].error.empty());
  CHECK(!r[1].acknowledged);
  CHECK(r[1].node == bad);
  if (how == "huge") {
    CHECK(r[1].error == "printed more than 64 MiB on standard output (the limit); stopped");
  } else {
    CHECK(r[1].error == "node " + bad + ": apply: empty input, expected a sia document");
  }
}
