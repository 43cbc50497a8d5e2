#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "ctl/history.hpp"
#include "ctl/slurm_generations.hpp"
#include "ctl/slurm_history.hpp"
#include "ctl_test_util.hpp"
#include "slurm/canned_runner.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
using sia::ctl::test::TempDir;
using sia::slurm::test::CannedRunner;

namespace {

json history_of(const std::vector<std::string>& names) {
  json rows = json::array();
  for (const auto& n : names) {
    rows.push_back({{"name", n},
                    {"user", "u"},
                    {"state", "finished"},
                    {"submitted", 100},
                    {"run_time", 60},
                    {"gpu_seconds", {{"t4", 60}}},
                    {"gpu_hours", 60.0 / 3600}});
  }
  return {{"kind", "JobHistory"}, {"data", {{"jobs", rows}, {"now", 200}}}};
}

}  // namespace

TEST_CASE("Slurm generations: recorded once each, in order; a bad file names its field",
          "[slurm_history]") {
  TempDir dir;
  const std::string st = dir / "state";
  CHECK(read_slurm_generations(st, "a").empty());
  record_slurm_generation(st, "a", {2, 19, "n2"});
  record_slurm_generation(st, "a", {1, 17, "n1"});
  record_slurm_generation(st, "a", {2, 20, "n3"});  // adopted again: replaced
  CHECK(read_slurm_generations(st, "a") ==
        std::vector<SlurmGeneration>{{1, 17, "n1"}, {2, 20, "n3"}});
  std::ofstream(st + "/slurm/generations/b.json") << R"({"generations":[{"generation":1}]})";
  auto [status, message] = sia::test::error_of([&] { read_slurm_generations(st, "b"); });
  CHECK(status == 65);
  CHECK(message == st + "/slurm/generations/b.json: generations[0].slurm_job: expected a "
                        "non-negative integer");
  std::ofstream(st + "/slurm/generations/c.json") << "{";
  CHECK(sia::test::error_of([&] { read_slurm_generations(st, "c"); }).first == 65);
}

TEST_CASE("history under Slurm: each job's Slurm jobs and sacct's figures beside sia's",
          "[slurm_history]") {
  TempDir dir;
  const std::string st = dir / "state";
  record_slurm_generation(st, "a", {1, 17, "n1"});
  record_slurm_generation(st, "a", {2, 19, "n2"});
  CannedRunner sacct;
  sacct.out = "17|CANCELLED by 0|00:01:05|0:15\n19|COMPLETED|00:00:30|0:0\n";
  json doc = history_of({"a", "b"});
  add_slurm_history(doc, st, sacct);
  CHECK(sacct.calls.size() == 1);
  const json& a = doc["data"]["jobs"][0]["slurm"];
  REQUIRE(a.size() == 2);
  CHECK(a[0] == json{{"generation", 1},
                     {"slurm_job", 17},
                     {"state", "CANCELLED"},
                     {"elapsed", 65.0},
                     {"exit_code", 0},
                     {"exit_signal", 15}});
  CHECK(a[1]["state"] == "COMPLETED");
  CHECK(doc["data"]["jobs"][1]["slurm"] == json::array());
  CHECK(doc["data"]["slurm_note"].is_null());
  const std::string table = history_table(doc);
  CHECK(table.find("SLURM JOBS") != std::string::npos);
  CHECK(table.find("17 CANCELLED 1m05s exit 0 signal 15, 19 COMPLETED 30s exit 0") !=
        std::string::npos);
  CHECK(table.find("note:") == std::string::npos);
  const std::string csv = history_csv(doc);
  CHECK(csv.substr(0, csv.find('\n')).ends_with(",reason,slurm_jobs"));
  CHECK(csv.find(",17 19\n") != std::string::npos);
}

TEST_CASE("history under Slurm without accounting: the ids, and one note line", "[slurm_history]") {
  TempDir dir;
  const std::string st = dir / "state";
  record_slurm_generation(st, "a", {1, 17, "n1"});
  CannedRunner sacct;
  sacct.status = 1;
  sacct.err = "Slurm accounting storage is disabled\n";
  json doc = history_of({"a"});
  add_slurm_history(doc, st, sacct);
  const json& g = doc["data"]["jobs"][0]["slurm"][0];
  CHECK(g["slurm_job"] == 17);
  CHECK(g["state"].is_null());
  CHECK(g["elapsed"].is_null());
  CHECK(doc["data"]["slurm_note"] ==
        "Slurm keeps no accounting here (sacct: accounting storage is disabled): no Slurm figures");
  const std::string table = history_table(doc);
  CHECK(table.find(" 17\n") != std::string::npos);
  CHECK(
      table.ends_with("note: Slurm keeps no accounting here (sacct: accounting storage is "
                      "disabled): no Slurm figures\n"));
  // Without Slurm the table and CSV are as they were.
  json plain = history_of({"a"});
  CHECK(history_table(plain).find("SLURM") == std::string::npos);
  CHECK(history_csv(plain).find("slurm") == std::string::npos);
}
