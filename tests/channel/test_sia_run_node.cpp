// SiaRunNode against the real sia-run program (built next to the tests), with /bin/sh
// workers: an apply starts a job, its report lines are read from their offsets, stopping
// all checkpoint-stops it without holding it, and the same placement resumes it.
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "channel/sia_run_node.hpp"
#include "channel_test_util.hpp"

using namespace sia::channel;
using nlohmann::json;
using sia::channel::test::TempDir;

namespace {

std::optional<NodeBackend::Outcome> wait_outcome(SiaRunNode& node, int seconds = 30) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (auto o = node.take_outcome()) return o;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

std::string state_of(SiaRunNode& node, const std::string& job) {
  json rs = node.run_status();
  for (const auto& j : rs["jobs"]) {
    if (j["name"] == job) return j["state"];
  }
  return "(none)";
}

}  // namespace

TEST_CASE("sia-run apply as a child: start, reports, stop without holding, resume",
          "[sia_run_node]") {
  TempDir tmp;
  std::ofstream(tmp / "cluster.toml") << "name = \"tiny\"\n[[node_groups]]\ngpu_type = \"t4\"\n"
                                         "gpus_per_node = 2\ncount = 2\n";
  const std::string worker =
      "trap 'exit 75' TERM; echo '{\"type\":\"progress\",\"step\":1}' >>\"$SIA_REPORT\"; "
      "while :; do sleep 0.05; done";
  json jobs = {
      {"apiVersion", "sia/v1"},
      {"kind", "Jobs"},
      {"data",
       {{"jobs",
         {{{"name", "a"}, {"model", "cifar10"}, {"command", {"/bin/sh", "-c", worker}}}}}}}};
  json placement = {{"apiVersion", "sia/v1"},
                    {"kind", "Placement"},
                    {"data",
                     {{"cluster_name", "tiny"},
                      {"jobs",
                       {{{"name", "a"},
                         {"gpu_type", "t4"},
                         {"nodes", {{{"name", "t4-0"}, {"gpus", {0}}}}},
                         {"batch_size", 32},
                         {"local_bsz", 32},
                         {"accum_steps", 0}}}}}}};
  SiaRunNodeOptions o;
  o.sia_run = std::string(SIA_TEST_BIN_DIR) + "/sia-run";
  o.state_dir = tmp / "state";
  o.node = "t4-0";
  o.cluster = tmp / "cluster.toml";
  o.apply_args = {"--grace", "5"};
  SiaRunNode node(o);

  node.begin_apply(placement, jobs);
  CHECK(node.busy());
  auto out = wait_outcome(node);
  REQUIRE(out);
  INFO(out->error);
  REQUIRE(out->ok);
  CHECK(out->op == NodeBackend::Op::apply);
  REQUIRE(out->plan["actions"].size() == 1);
  CHECK(out->plan["actions"][0]["action"] == "start");
  CHECK(state_of(node, "a") == "running");

  std::vector<ReportLine> lines;
  Offsets next;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (lines.empty() && std::chrono::steady_clock::now() < end) {
    lines = node.read_reports({}, 1 << 16, next);
    if (lines.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].job == "a");
  CHECK(lines[0].offset == 0);
  CHECK(lines[0].line == R"({"type":"progress","step":1})");
  CHECK(next["a"] == static_cast<std::int64_t>(lines[0].line.size() + 1));
  CHECK(node.report_ends()["a"] == next["a"]);
  CHECK(node.read_reports(next, 1 << 16, next).empty());

  node.begin_stop_all("test");
  out = wait_outcome(node);
  REQUIRE(out);
  INFO(out->error);
  CHECK(out->ok);
  CHECK(out->op == NodeBackend::Op::stop);
  CHECK(state_of(node, "a") == "preempted");
  CHECK(node.run_status()["jobs"][0]["held"] == false);

  // Nothing live: stopping all is done at once, without a process.
  node.begin_stop_all("again");
  out = node.take_outcome();
  REQUIRE(out);
  CHECK(out->ok);

  // The same placement resumes the job (it was not held).
  node.begin_apply(placement, jobs);
  out = wait_outcome(node);
  REQUIRE(out);
  REQUIRE(out->ok);
  CHECK(out->plan["actions"][0]["action"] == "start");
  CHECK(state_of(node, "a") == "running");

  node.begin_stop_all("cleanup");
  out = wait_outcome(node);
  REQUIRE(out);
  CHECK(out->ok);
}

TEST_CASE("a failing apply reports its status and error line", "[sia_run_node]") {
  TempDir tmp;
  SiaRunNodeOptions o;
  o.sia_run = std::string(SIA_TEST_BIN_DIR) + "/sia-run";
  o.state_dir = tmp / "state";
  o.node = "t4-0";
  SiaRunNode node(o);
  node.begin_apply({{"apiVersion", "sia/v1"}, {"kind", "Jobs"}, {"data", json::object()}},
                   json::object());
  auto out = wait_outcome(node);
  REQUIRE(out);
  CHECK_FALSE(out->ok);
  CHECK(out->exit_status == 65);
  CHECK(out->error.find("sia-run: error:") == 0);

  o.sia_run = tmp / "no-such-program";
  SiaRunNode missing(o);
  missing.begin_apply(SiaRunNode::empty_placement(), json::object());
  out = missing.take_outcome();
  REQUIRE(out);
  CHECK(out->exit_status == 69);
}
