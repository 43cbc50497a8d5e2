// Root only: a fake controller run by another local user (nobody) never gets an agent's
// READY, so it can never have a job run -- on an ipc:// path in a directory it owns, on an
// abstract endpoint, or as the owner of the socket. With --controller-user naming that
// user the same fake is trusted (the control: the fake works). The tcp:// case (a server
// without the pinned key) is in test_agent.cpp. Exits 77 (ctest skips it) as anyone else.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <catch2/catch.hpp>
#include <zmq.hpp>

#include "channel/agent.hpp"
#include "channel/ipc_trust.hpp"
#include "channel_test_util.hpp"
#include "os/account.hpp"
#include "root_only.hpp"
#include "test_util.hpp"

using namespace sia::channel;
using namespace sia::channel::test;
using sia::test::error_of;
using std::chrono::milliseconds;

namespace {

// A child process that, as `account`, binds a ROUTER at `endpoint`, writes 'B' to a pipe
// once bound, and for every message it receives writes 'M' and answers with an ASSIGN.
class FakeController {
 public:
  FakeController(const sia::os::Account& account, const std::string& endpoint) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      if (::setgroups(0, nullptr) != 0 || ::setgid(account.gid) != 0 ||
          ::setuid(account.uid) != 0) {
        ::_exit(3);
      }
      try {
        zmq::context_t ctx;
        zmq::socket_t router(ctx, zmq::socket_type::router);
        router.set(zmq::sockopt::linger, 0);
        router.bind(endpoint);
        (void)!::write(fds[1], "B", 1);
        for (;;) {
          zmq::message_t id, body;
          if (!router.recv(id)) continue;
          if (id.more()) (void)router.recv(body);
          (void)!::write(fds[1], "M", 1);
          Assign a;
          a.round = 1;
          a.seq = 1;
          router.send(id, zmq::send_flags::sndmore);
          router.send(zmq::buffer(encode(a)), zmq::send_flags::none);
        }
      } catch (...) {
        ::_exit(4);
      }
    }
    ::close(fds[1]);
    fd_ = fds[0];
    ::fcntl(fd_, F_SETFL, O_NONBLOCK);
  }
  ~FakeController() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(fd_);
  }
  FakeController(const FakeController&) = delete;
  FakeController& operator=(const FakeController&) = delete;

  // Reads what the child wrote, waiting up to `ms` for anything when there is nothing yet.
  std::string take(int ms) {
    std::string out;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return out;
    char buf[64];
    ssize_t n;
    while ((n = ::read(fd_, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
  // Until it has bound (true) or died (false).
  bool bound() {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < end) {
      std::string got = take(100);
      if (got.find('B') != std::string::npos) return true;
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

AgentOptions agent_of(const std::string& connect) {
  AgentOptions o;
  o.connect = connect;
  o.node = "n0";
  o.heartbeat_interval = 0.05;
  o.heartbeat_liveness = 200;
  o.fence_after = 60;
  o.backoff_min = 0.02;
  o.backoff_max = 0.05;
  o.log = [](const std::string&) {};
  return o;
}

sia::os::Account nobody() {
  auto a = sia::os::find_account("nobody");
  REQUIRE(a);
  REQUIRE(a->uid != 0);
  return *a;
}

}  // namespace

TEST_CASE("a fake controller in another user's directory gets nothing", "[agent][root]") {
  sia::test::require_root("a fake controller of another user");
  const auto other = nobody();
  TempDir tmp;
  REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
  const std::string dir = tmp / "ctl";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(::chown(dir.c_str(), other.uid, other.gid) == 0);
  const std::string endpoint = "ipc://" + dir + "/sock";
  FakeController fake(other, endpoint);
  REQUIRE(fake.bound());
  FakeNode node;

  SECTION("refused before connecting: status 77, no READY, no job") {
    Agent agent(agent_of(endpoint), node);
    auto [status, message] = error_of([&] { agent.step(milliseconds(0)); });
    CHECK(status == 77);
    CHECK(message.find("the socket's directory " + dir + " (owner uid " +
                       std::to_string(other.uid) + ", mode 0700) has an untrusted owner") !=
          std::string::npos);
    CHECK(agent.sessions() == 0);
    CHECK(fake.take(0).empty());
    CHECK(node.applies == 0);
  }
  SECTION("the control: named as the controller's user, the same fake is heard") {
    AgentOptions o = agent_of(endpoint);
    o.controller_uid = other.uid;
    Agent agent(o, node);
    std::string got;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (got.find('M') == std::string::npos && std::chrono::steady_clock::now() < end) {
      agent.step(milliseconds(5));
      got += fake.take(5);
    }
    CHECK(got.find('M') != std::string::npos);
  }
}

TEST_CASE("a socket owned by another user is refused even in root's directory", "[agent][root]") {
  sia::test::require_root("a socket of another user");
  const auto other = nobody();
  TempDir tmp;
  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("ipc://" + tmp / "sock");
  REQUIRE(::chown((tmp / "sock").c_str(), other.uid, other.gid) == 0);
  FakeNode node;
  Agent agent(agent_of("ipc://" + tmp / "sock"), node);
  auto [status, message] = error_of([&] { agent.step(milliseconds(0)); });
  CHECK(status == 77);
  CHECK(message.find("/sock (owner uid " + std::to_string(other.uid)) != std::string::npos);
  CHECK(message.find("has an untrusted owner") != std::string::npos);
  CHECK(node.applies == 0);
}

TEST_CASE("a fake controller on an abstract endpoint gets nothing", "[agent][root]") {
  sia::test::require_root("a fake controller of another user");
  const auto other = nobody();
  const std::string endpoint = "ipc://@sia-fake-controller-" + std::to_string(::getpid());
  FakeController fake(other, endpoint);
  REQUIRE(fake.bound());
  FakeNode node;
  auto [status, message] = error_of([&] { Agent agent(agent_of(endpoint), node); });
  CHECK(status == 78);
  CHECK(message.find("an abstract ipc:// endpoint has no directory to protect it") !=
        std::string::npos);
  CHECK(fake.take(0).empty());
  CHECK(node.applies == 0);
}
