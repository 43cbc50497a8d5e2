// Root only: an ipc:// socket bound after restrict_ipc_peers drops a peer of another uid
// (nobody) even when the directory and the socket are open to everyone, and takes a peer
// of its own uid. Exits 77 (ctest skips it) when not run as root.
#include <catch2/catch.hpp>

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include <zmq.hpp>

#include "channel/security.hpp"
#include "exec/temp_dir.hpp"
#include "os/account.hpp"
#include "root_only.hpp"

using sia::exec::test::TempDir;

namespace {

// A child process that, as `uid`/`gid`, connects a DEALER to `endpoint`, sends "uid N"
// and waits to be killed (so its connection stays up while the parent looks).
class Peer {
 public:
  Peer(uid_t uid, gid_t gid, const std::string& endpoint) : pid_(::fork()) {
    if (pid_ != 0) return;
    if (uid != ::geteuid() &&
        (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) {
      ::_exit(3);
    }
    try {
      zmq::context_t ctx;
      zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
      dealer.connect(endpoint);
      (void)dealer.send(zmq::buffer("uid " + std::to_string(::getuid())), zmq::send_flags::none);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(4);
    }
  }
  ~Peer() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

 private:
  pid_t pid_;
};

// Waits up to `timeout` for a monitor event `id` on `monitor`; true when one came.
bool wait_event(zmq::socket_t& monitor, std::uint16_t id, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    zmq::pollitem_t item = {monitor.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    zmq::message_t ev, addr;
    if (!monitor.recv(ev, zmq::recv_flags::dontwait)) continue;
    if (ev.more()) (void)monitor.recv(addr, zmq::recv_flags::none);
    std::uint16_t got = 0;
    if (ev.size() >= 2) std::memcpy(&got, ev.data(), 2);
    if (got == id) return true;
  }
}

// The payload of the next message on `router` within `timeout`, or "" when none came.
std::string next_payload(zmq::socket_t& router, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item = {router.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) <= 0) return "";
  zmq::message_t id, body;
  (void)router.recv(id, zmq::recv_flags::none);
  (void)router.recv(body, zmq::recv_flags::none);
  return body.to_string();
}

}  // namespace

TEST_CASE("an ipc socket drops a peer of another uid, even in a directory open to all",
          "[channel][root]") {
  sia::test::require_root("connecting as another user");
  auto nobody = sia::os::find_account("nobody");
  REQUIRE(nobody);
  REQUIRE(nobody->uid != 0);
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  const std::string dir = tmp / "open";
  REQUIRE(::mkdir(dir.c_str(), 0777) == 0);
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);  // no help from the mode: only the uid filter
  const std::string path = dir + "/hub";
  const std::string endpoint = "ipc://" + path;

  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  sia::channel::restrict_ipc_peers(router, endpoint);
  router.bind(endpoint);
  REQUIRE(::chmod(path.c_str(), 0777) == 0);
  REQUIRE(zmq_socket_monitor(router.handle(), "inproc://ipc-peers-monitor",
                             ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_ACCEPT_FAILED) == 0);
  zmq::socket_t monitor(ctx, zmq::socket_type::pair);
  monitor.set(zmq::sockopt::linger, 0);
  monitor.connect("inproc://ipc-peers-monitor");

  {
    Peer stranger(nobody->uid, nobody->gid, endpoint);
    // The listener refuses the connection (an accept that fails); nothing gets through.
    REQUIRE(wait_event(monitor, ZMQ_EVENT_ACCEPT_FAILED, std::chrono::seconds(60)));
    CHECK(next_payload(router, std::chrono::milliseconds(500)) == "");
  }
  Peer own(::geteuid(), ::getegid(), endpoint);
  CHECK(next_payload(router, std::chrono::seconds(60)) == "uid " + std::to_string(::geteuid()));
}
