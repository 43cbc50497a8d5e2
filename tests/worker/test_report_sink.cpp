#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "test_util.hpp"
#include "worker/report_sink.hpp"

using namespace sia;
using namespace sia::worker;
namespace fs = std::filesystem;

TEST_CASE("reports are appended to a file, one line each", "[worker][report]") {
  const fs::path path = fs::temp_directory_path() / ("sia-report-" + std::to_string(::getpid()));
  fs::remove(path);
  {
    ReportSink a(path.string(), nullptr);
    a.send({{"type", "report"}, {"step", 1}});
  }
  {
    ReportSink b(path.string(), nullptr);  // a restarted worker appends
    b.send({{"type", "report"}, {"step", 2}, {"loss", 0.5}});
  }
  std::ifstream in(path);
  std::string l1, l2;
  std::getline(in, l1);
  std::getline(in, l2);
  CHECK(l1 == R"({"step":1,"type":"report"})");
  CHECK(l2 == R"({"loss":0.5,"step":2,"type":"report"})");
  fs::remove(path);
  CHECK(test::error_of([] { ReportSink("/nonexistent/dir/r.jsonl", nullptr); }).first == 73);
}

TEST_CASE("reports are pushed to a ZeroMQ endpoint", "[worker][report]") {
  const fs::path socket =
      fs::temp_directory_path() / ("sia-report-" + std::to_string(::getpid()) + ".ipc");
  const std::string endpoint = "ipc://" + socket.string();
  zmq::context_t ctx;
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.bind(endpoint);
  pull.set(zmq::sockopt::rcvtimeo, 5000);
  CHECK(is_zmq_endpoint(endpoint));
  CHECK(is_zmq_endpoint("tcp://controller:5555"));
  CHECK_FALSE(is_zmq_endpoint("/var/log/reports.jsonl"));
  {
    ReportSink sink(endpoint, nullptr);
    sink.send({{"type", "report"}, {"step", 7}});
  }
  zmq::message_t msg;
  REQUIRE(pull.recv(msg));
  CHECK(msg.to_string() == R"({"step":7,"type":"report"})");
  pull.close();
  fs::remove(socket);
}
