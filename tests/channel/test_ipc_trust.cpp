// What an agent checks before it connects over ipc:// (channel/ipc_trust.hpp), as any user:
// modes, links and abstract names. Owners other than the test's own uid need root: see
// test_fake_controller.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "channel/agent.hpp"
#include "channel/hub.hpp"
#include "channel/ipc_trust.hpp"
#include "channel_test_util.hpp"
#include "test_util.hpp"

using namespace sia::channel;
using namespace sia::channel::test;
using sia::test::error_of;
using std::chrono::milliseconds;

namespace {

std::string resolved(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  REQUIRE(r);
  std::string s = r;
  std::free(r);
  return s;
}

std::pair<int, std::string> check(const std::string& endpoint, std::string* out = nullptr) {
  std::string waiting;
  return error_of([&] {
    auto e = trusted_ipc_endpoint(endpoint, trusted_uids(std::nullopt), waiting);
    if (out) *out = e ? *e : "waiting: " + waiting;
  });
}

AgentOptions quiet_agent(const std::string& connect, std::vector<std::string>* log) {
  AgentOptions o;
  o.connect = connect;
  o.node = "n0";
  o.heartbeat_interval = 0.05;
  o.fence_after = 5;
  o.backoff_min = 0.02;
  o.backoff_max = 0.05;
  o.log = [log](const std::string& l) { log->push_back(l); };
  return o;
}

}  // namespace

TEST_CASE("trusted uids: root, this process, the controller's user", "[ipc_trust]") {
  auto u = trusted_uids(std::nullopt);
  CHECK(u.front() == 0);
  CHECK(std::count(u.begin(), u.end(), ::geteuid()) == 1);
  u = trusted_uids(4242);
  CHECK(std::count(u.begin(), u.end(), 4242u) == 1);
}

TEST_CASE("a private directory is trusted and its path resolved", "[ipc_trust]") {
  TempDir tmp;
  REQUIRE(::mkdir((tmp / "real").c_str(), 0700) == 0);
  REQUIRE(::symlink((tmp / "real").c_str(), (tmp / "link").c_str()) == 0);
  std::string out;
  CHECK(check("ipc://" + tmp / "real/ctl", &out).first == 0);
  CHECK(out == "ipc://" + resolved(tmp / "real") + "/ctl");
  // A link is followed once, here: the agent connects to what it resolved to.
  CHECK(check("ipc://" + tmp / "link/ctl", &out).first == 0);
  CHECK(out == "ipc://" + resolved(tmp / "real") + "/ctl");
  // Not ipc: as it is.
  CHECK(check("tcp://127.0.0.1:7400", &out).first == 0);
  CHECK(out == "tcp://127.0.0.1:7400");
}

TEST_CASE("a missing directory is waited for, not refused", "[ipc_trust]") {
  TempDir tmp;
  std::string out;
  CHECK(check("ipc://" + tmp / "later/ctl", &out).first == 0);
  CHECK(out ==
        "waiting: no directory " + tmp / "later" + " yet (the controller makes it when it starts)");
}

TEST_CASE("a directory others may write is refused, status 77", "[ipc_trust]") {
  TempDir tmp;
  const std::string open = tmp / "open";
  REQUIRE(::mkdir(open.c_str(), 0700) == 0);
  SECTION("the socket's directory, world-writable") {
    REQUIRE(::chmod(open.c_str(), 0777) == 0);
    auto [status, message] = check("ipc://" + open + "/ctl");
    CHECK(status == 77);
    CHECK(message.find("connect ipc://" + open + "/ctl: the socket's directory " + resolved(open) +
                       " (owner uid " + std::to_string(::geteuid()) +
                       ", mode 0777) is writable by others: another user could have bound "
                       "the controller's socket there") == 0);
  }
  SECTION("the socket's directory, group-writable") {
    REQUIRE(::chmod(open.c_str(), 0770) == 0);
    CHECK(check("ipc://" + open + "/ctl").first == 77);
  }
  SECTION("the socket's directory, sticky: still refused (a name not yet bound is free)") {
    REQUIRE(::chmod(open.c_str(), 01777) == 0);
    CHECK(check("ipc://" + open + "/ctl").first == 77);
  }
  SECTION("a directory above it, world-writable without the sticky bit") {
    REQUIRE(::chmod(open.c_str(), 0777) == 0);
    REQUIRE(::mkdir((open + "/sub").c_str(), 0700) == 0);
    auto [status, message] = check("ipc://" + open + "/sub/ctl");
    CHECK(status == 77);
    CHECK(message.find("the directory " + resolved(open) + " (") != std::string::npos);
  }
  SECTION("a directory above it, world-writable and sticky (as /tmp): trusted") {
    REQUIRE(::chmod(open.c_str(), 01777) == 0);
    REQUIRE(::mkdir((open + "/sub").c_str(), 0700) == 0);
    CHECK(check("ipc://" + open + "/sub/ctl").first == 0);
  }
}

TEST_CASE("something other than a socket at the socket's name is refused", "[ipc_trust]") {
  TempDir tmp;
  std::ofstream(tmp / "ctl") << "";
  auto [status, message] = check("ipc://" + tmp / "ctl");
  CHECK(status == 77);
  CHECK(message.find("the socket " + resolved(tmp.path()) + "/ctl (owner uid") !=
        std::string::npos);
  CHECK(message.find(") is not a socket") != std::string::npos);
}

TEST_CASE("an abstract ipc endpoint is refused by the agent, status 78", "[ipc_trust][agent]") {
  FakeNode node;
  std::vector<std::string> log;
  auto [status, message] =
      error_of([&] { Agent agent(quiet_agent("ipc://@sia-ctl", &log), node); });
  CHECK(status == 78);
  CHECK(message ==
        "connect ipc://@sia-ctl: an abstract ipc:// endpoint has no directory to protect it "
        "(any local user may bind the name), so an agent does not trust it; use "
        "ipc:///run/sia/ctl (a directory of the controller's) or tcp:// with CURVE");
  CHECK(check("ipc://@sia-ctl").first == 78);
  CHECK(node.applies == 0);
}

TEST_CASE("an agent refuses an open directory and waits for a missing one", "[ipc_trust][agent]") {
  TempDir tmp;
  FakeNode node;
  std::vector<std::string> log;
  SECTION("open: the first step ends the agent with 77, nothing sent") {
    REQUIRE(::mkdir((tmp / "open").c_str(), 0777) == 0);
    REQUIRE(::chmod((tmp / "open").c_str(), 0777) == 0);
    Agent agent(quiet_agent("ipc://" + tmp / "open/ctl", &log), node);
    auto [status, message] = error_of([&] { agent.step(milliseconds(0)); });
    CHECK(status == 77);
    CHECK(agent.sessions() == 0);
  }
  SECTION("missing: the agent waits, then connects once the controller made it") {
    Agent agent(quiet_agent("ipc://" + tmp / "run/ctl", &log), node);
    agent.step(milliseconds(0));
    CHECK(agent.sessions() == 0);
    REQUIRE(log.size() == 1);
    CHECK(log[0] == "connect ipc://" + tmp / "run/ctl" + ": no directory " + tmp / "run" +
                        " yet (the controller makes it when it starts)");
    HubOptions ho;
    ho.bind = "ipc://" + tmp / "run/ctl";  // the hub makes the directory (0700)
    ho.heartbeat_interval = 0.05;
    ho.log = [](const std::string&) {};
    Hub hub(ho, nullptr);
    auto end = std::chrono::steady_clock::now() + milliseconds(10000);
    while (!agent.connected() && std::chrono::steady_clock::now() < end) {
      agent.step(milliseconds(5));
      hub.poll(milliseconds(5));
    }
    CHECK(agent.connected());
    CHECK(log.size() >= 2);  // the wait is said once
    CHECK(std::count(log.begin(), log.end(), log[0]) == 1);
  }
}
