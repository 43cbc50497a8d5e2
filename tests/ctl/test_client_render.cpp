#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "ctl/client_render.hpp"

using nlohmann::json;
using sia::ctl::render_table;

namespace {

json status_of(std::vector<json> run_as) {
  json jobs = json::array();
  for (std::size_t i = 0; i < run_as.size(); ++i) {
    jobs.push_back({{"name", "j" + std::to_string(i)}, {"state", "queued"}, {"run_as", run_as[i]}});
  }
  return {{"kind", "JobStatusList"}, {"data", {{"jobs", jobs}}}};
}

// The table's lines, each squeezed to single spaces and trimmed.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string squeezed;
    for (std::string w; words >> w;) squeezed += (squeezed.empty() ? "" : " ") + w;
    out.push_back(squeezed);
  }
  return out;
}

}  // namespace

TEST_CASE("status has a USER column only when some job runs as an account of its own",
          "[ctl][render]") {
  auto plain =
      lines_of(render_table(status_of({nullptr, "the node's user (admin client:root)"}), 0));
  REQUIRE(plain.size() == 3);
  CHECK(plain[0] == "JOB STATE GPUS PLACEMENT RESTARTS STEP PROGRESS RHO AGE REASON");
  CHECK(plain[1] == "j0 queued 0 - 0 0 0.0 - 0s -");

  auto users =
      lines_of(render_table(status_of({"nobody", "the node's user (admin client:root)", nullptr,
                                       "the node's user, never root (client:bob has no user)"}),
                            0));
  REQUIRE(users.size() == 5);
  CHECK(users[0] == "JOB USER STATE GPUS PLACEMENT RESTARTS STEP PROGRESS RHO AGE REASON");
  CHECK(users[1] == "j0 nobody queued 0 - 0 0 0.0 - 0s -");
  CHECK(users[2] == "j1 - queued 0 - 0 0 0.0 - 0s -");
  CHECK(users[3] == "j2 - queued 0 - 0 0 0.0 - 0s -");
  CHECK(users[4] == "j3 - queued 0 - 0 0 0.0 - 0s -");
}

TEST_CASE("status's USER column names the person as history does", "[ctl][render]") {
  json doc = status_of({"root", nullptr});
  doc["data"]["jobs"][0]["user"] = "root";   // client:admin's jobs run as root: root
  doc["data"]["jobs"][1]["user"] = "alice";  // local:alice: alice, not "-"
  auto lines = lines_of(render_table(doc, 0));
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == "j0 root queued 0 - 0 0 0.0 - 0s -");
  CHECK(lines[2] == "j1 alice queued 0 - 0 0 0.0 - 0s -");
}

TEST_CASE("a rho from the model alone is marked as an estimate", "[ctl][render]") {
  json doc = status_of({nullptr, nullptr});
  doc["data"]["jobs"][0]["rho"] = 13.8;
  doc["data"]["jobs"][0]["rho_basis"] = "model";
  doc["data"]["jobs"][1]["rho"] = 1.05;
  doc["data"]["jobs"][1]["rho_basis"] = "throughput";
  auto lines = lines_of(render_table(doc, 0));
  CHECK(lines[1] == "j0 queued 0 - 0 0 0.0 ~13.80 0s -");
  CHECK(lines[2] == "j1 queued 0 - 0 0 0.0 1.05 0s -");
}

TEST_CASE("status shows each job's and app's rho and sums them up", "[ctl][render]") {
  json doc = status_of({nullptr, nullptr});
  doc["data"]["jobs"][0]["rho"] = 1.5;
  doc["data"]["apps"] = json::array({{{"name", "s"}, {"state", "running"}, {"rho", 0.8}}});
  doc["data"]["fairness"] = {{"jobs", {{"count", 2}, {"unfair", 1}, {"worst_rho", 1.5}}},
                             {"apps", {{"count", 1}, {"unfair", 0}, {"worst_rho", 0.8}}}};
  auto lines = lines_of(render_table(doc, 0));
  REQUIRE(lines.size() == 7);  // jobs (3), a blank line, apps (2), the fairness line
  CHECK(lines[1] == "j0 queued 0 - 0 0 0.0 1.50 0s -");
  CHECK(lines[2] == "j1 queued 0 - 0 0 0.0 - 0s -");
  CHECK(lines[5].substr(lines[5].size() - 4) == "0.80");
  CHECK(
      lines[6] ==
      "fairness: jobs worst rho 1.50, 1 of 2 unfair; apps worst rho 0.80, 0 of 1 unfair (rho > 1)");
  // Without a rho anywhere, no line.
  CHECK(lines_of(render_table(status_of({nullptr}), 0)).size() == 2);
}
