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
  CHECK(plain[0] == "JOB STATE GPUS PLACEMENT RESTARTS STEP PROGRESS AGE REASON");
  CHECK(plain[1] == "j0 queued 0 - 0 0 0.0 0s -");

  auto users =
      lines_of(render_table(status_of({"nobody", "the node's user (admin client:root)", nullptr,
                                       "the node's user, never root (client:bob has no user)"}),
                            0));
  REQUIRE(users.size() == 5);
  CHECK(users[0] == "JOB USER STATE GPUS PLACEMENT RESTARTS STEP PROGRESS AGE REASON");
  CHECK(users[1] == "j0 nobody queued 0 - 0 0 0.0 0s -");
  CHECK(users[2] == "j1 - queued 0 - 0 0 0.0 0s -");
  CHECK(users[3] == "j2 - queued 0 - 0 0 0.0 0s -");
  CHECK(users[4] == "j3 - queued 0 - 0 0 0.0 0s -");
}
