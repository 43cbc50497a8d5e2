// ctl/node_outputs: reading what node commands print.
#include <catch2/catch.hpp>

#include "ctl/node_outputs.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;

TEST_CASE("a node command's document: one of the kind asked for, else bad data", "[nodes]") {
  const std::string status =
      R"({"apiVersion":"sia/v1","kind":"RunStatus","metadata":{},"data":{"jobs":[]}})";
  CHECK(node_document(status, "node n0: status", "RunStatus")["jobs"].is_array());
  for (const std::string& out :
       {std::string(), std::string("\n"), status + "\n" + status, std::string("{\"kind\":")}) {
    auto e = test::error_of([&] { node_document(out, "node n0: status", "RunStatus"); });
    CHECK(e.first == 65);
    CHECK(e.second.rfind("node n0: status", 0) == 0);
  }
}

TEST_CASE("report lines: each {job, offset, report} line, the others skipped", "[nodes]") {
  std::string error;
  auto lines = node_report_lines("n0",
                                 "{\"job\":\"a\",\"offset\":0,\"next\":9,\"report\":{\"step\":1}}\n"
                                 "not json\n\n"
                                 "{\"job\":\"a\",\"offset\":1e400,\"report\":{}}\n"
                                 "{\"job\":\"b\",\"offset\":4,\"report\":{}}",
                                 &error);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].node == "n0");
  CHECK(lines[0].job == "a");
  CHECK(lines[0].next == 9);
  CHECK(json::parse(lines[0].line)["step"] == 1);
  CHECK(lines[1].job == "b");
  CHECK(lines[1].next == 0);
  CHECK(error == "node n0: reports: a line that is not {job, offset, report}");
}

TEST_CASE("a node's status: the jobs it lists, whatever else it holds", "[nodes]") {
  NodeStatus s;
  s.node = "n0";
  s.ok = true;
  s.status = json::parse(R"({"jobs":[{"name":"a","state":"failed","round":3,"exit_status":2,
    "reason":"rank 1 exited 2","failed_rank":1,"log_tail":"boom"},{"state":"running"},7,
    {"name":"b","state":"no such state","round":1.5}]})");
  NodeStatus down = s;
  down.node = "n1";
  down.ok = false;
  auto on = jobs_on_nodes({s, down});
  REQUIRE(on.size() == 2);
  REQUIRE(on["a"].size() == 1);
  CHECK(on["a"][0].generation == 3);
  CHECK(on["a"][0].exit_status == 2);
  REQUIRE(on["a"][0].log_tail);
  CHECK(on["a"][0].log_tail->rank == 1);
  CHECK_FALSE(on["b"][0].state);
  CHECK(on["b"][0].generation == 0);
}
