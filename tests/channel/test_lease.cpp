#include <algorithm>
#include <chrono>
#include <map>

#include <catch2/catch.hpp>

#include "channel/hub.hpp"
#include "channel/lease.hpp"
#include "channel_test_util.hpp"
#include "exec/executor.hpp"
#include "exec/fakes.hpp"
#include "exec/node_plan.hpp"

using namespace sia::channel;
using namespace sia::channel::test;
using nlohmann::json;
using sia::exec::test::FakeClock;
using std::chrono::milliseconds;

namespace {

// A hub whose time is a fake clock, its log lines kept, and a peer that speaks for n0.
struct ClockedHub {
  TempDir tmp;
  FakeClock clock;
  std::vector<std::string> lines;
  Hub hub{options(), nullptr};
  RawPeer peer{hub.endpoint()};

  HubOptions options() {
    HubOptions o;
    o.bind = "ipc://" + tmp / "ctl";
    o.heartbeat_interval = 1;
    o.heartbeat_liveness = 2;
    o.fence_after = 5;  // assumed: 1 x 3 + 5 + 0 = 8 s
    o.clock = &clock;
    o.log = [this](const std::string& l) { lines.push_back(l); };
    return o;
  }

  // Sends READY (with `lease`, if any) and polls until the hub took it.
  void say_ready(const std::optional<Lease>& lease) {
    Ready r;
    r.node = "n0";
    r.lease = lease;
    peer.send(r);
    bool found = false;
    drive(
        hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
    REQUIRE(found);
  }

  // Moves the clock to `seconds` after its start and lets the hub look at its timers.
  bool fenced_at(double seconds) {
    clock.advance_to(sia::os::Clock::TimePoint{} + sia::os::span(seconds));
    hub.poll(milliseconds(0));
    return hub.agent("n0")->fenced;
  }

  std::size_t said(const std::string& part) const {
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(part) != std::string::npos;
    return n;
  }
};

}  // namespace

TEST_CASE("the silence limit is the controller's detection, the fence and the grace", "[lease]") {
  Lease l = agent_lease(30, 120);
  CHECK(l.fence_after == 30);
  CHECK(l.grace == 120 + sia::exec::kKillMarginSeconds);
  // A grace longer than fence_after counts twice: an apply begun before the fence runs on.
  CHECK(silence_limit(1, 3, l) == Approx(4 + 130 + 130));
  CHECK(silence_limit(0.5, 8, agent_lease(4, 10)) == Approx(4.5 + 20 + 20));
  CHECK(silence_limit(0.5, 8, agent_lease(30, 10)) == Approx(4.5 + 30 + 20));
  // An agent that says nothing is assumed to have an agent's default grace.
  Lease a = assumed_lease(30);
  CHECK(a.fence_after == 30);
  CHECK(a.grace == kChannelTiming.agent_grace + sia::exec::kKillMarginSeconds);
  // The defaults: a silent node's jobs may start elsewhere after 64 s.
  CHECK(silence_limit(kChannelTiming.heartbeat_interval, kChannelTiming.heartbeat_liveness,
                      agent_lease(kChannelTiming.fence_after, kChannelTiming.agent_grace)) ==
        Approx(64));
  CHECK(describe(agent_lease(2, 3)) == "fence_after 2.0 s, grace 13.0 s");
}

TEST_CASE("the silence limit covers an apply that runs on past the fence", "[lease]") {
  // An apply begun at the agent's last word from the controller (t = 0) may stop jobs for
  // the whole grace, then start a generation; the fence's stop waits for it
  // (test_agent.cpp, "a fence during an apply...") and takes the grace again. The jobs
  // have surely ended by max(fence_after, grace) + grace; the controller stops hearing
  // the agent up to heartbeat_interval x (heartbeat_liveness + 1) before that word.
  const double hb = 0.5;
  const int liveness = 8;
  for (const Lease l :
       {agent_lease(5, 5), agent_lease(30, 20), agent_lease(60, 120), agent_lease(1, 0)}) {
    const double apply_ends = l.grace;
    const double stop_begins = std::max(l.fence_after, apply_ends);
    const double jobs_ended = stop_begins + l.grace;
    CHECK(silence_limit(hb, liveness, l) >= hb * (liveness + 1) + jobs_ended);
  }
}

TEST_CASE("an agent without a lease is fenced after the controller's assumption", "[lease][hub]") {
  ClockedHub h;
  h.say_ready(std::nullopt);
  auto v = h.hub.agent("n0");
  CHECK(v->lease.fence_after == 5);
  CHECK(v->fence_limit == Approx(3 + 30 + 30));  // fence_after 5, grace 20 + 10
  CHECK_FALSE(h.fenced_at(62.9));
  CHECK_FALSE(h.hub.agent("n0")->up);  // down long ago, its jobs still count as running
  CHECK(h.fenced_at(63));
  CHECK(h.said("lease") == 0);
}

TEST_CASE("an agent's shorter lease fences its node sooner", "[lease][hub]") {
  ClockedHub h;
  h.say_ready(Lease{2, 1});  // 3 + max(2, 1) + 1 = 6 s
  CHECK(h.hub.agent("n0")->fence_limit == Approx(6));
  CHECK_FALSE(h.fenced_at(5.9));
  CHECK(h.fenced_at(6));
  CHECK(h.said("lease") == 0);
}

TEST_CASE("an agent's longer lease is taken: fenced later, said once", "[lease][hub]") {
  ClockedHub h;
  const Lease longer = agent_lease(200, 20);  // 3 + max(200, 30) + 30 = 233 s
  h.say_ready(longer);
  CHECK(h.hub.agent("n0")->fence_limit == Approx(233));
  REQUIRE(h.said("is longer than this controller's") == 1);
  CHECK(h.said("fenced after 233.0 s of silence, not 63.0 s") == 1);
  // Well past the controller's own assumption, the node still holds its jobs.
  CHECK_FALSE(h.fenced_at(200));
  CHECK(h.hub.nodes_up().empty());
  // A READY again with the same lease (a reconnect) is not said again.
  h.say_ready(longer);
  CHECK(h.said("is longer than this controller's") == 1);
  // Silence counts from that READY (at 200 s).
  CHECK_FALSE(h.fenced_at(200 + 232.9));
  CHECK(h.fenced_at(200 + 233));
}

namespace {

// A hub's options on an ipc endpoint in `tmp`: heartbeats 1 s x 2, fence_after 5, no log,
// n0's lease remembered as `n0`.
HubOptions remembering_hub(const TempDir& tmp, const Lease& n0) {
  HubOptions o;
  o.bind = "ipc://" + tmp / "ctl";
  o.heartbeat_interval = 1;
  o.heartbeat_liveness = 2;
  o.fence_after = 5;
  o.log = [](const std::string&) {};
  o.remembered = {{"n0", n0}};
  return o;
}

}  // namespace

TEST_CASE("a node known from the journal only has its remembered lease until its READY",
          "[lease][hub]") {
  TempDir tmp;
  HubOptions o = remembering_hub(tmp, Lease{200, 20});
  Hub hub(o, nullptr);
  hub.confirm_reports("n0", {{"a", 10}});
  hub.confirm_reports("n1", {{"b", 10}});
  CHECK(hub.agent("n0")->lease.fence_after == 200);
  CHECK(hub.agent("n0")->fence_limit == Approx(3 + 200 + 20));
  CHECK(hub.agent("n1")->fence_limit == Approx(3 + 30 + 30));  // never seen: assumed
  // Its READY says its lease now; one without a lease is the assumed one, not the memory.
  RawPeer peer(hub.endpoint());
  Ready r;
  r.node = "n0";
  peer.send(r);
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(hub.agent("n0")->fence_limit == Approx(3 + 30 + 30));
}

TEST_CASE("a remembered lease shorter than the assumed one is not taken before the READY",
          "[lease][hub]") {
  // With fence_after 5 the assumed lease is (5, 30): its stop span max(5, 30) + 30 = 60 s.
  const std::map<std::string, Lease> remembered = {
      {"short", Lease{5, 1}}, {"long_fence", Lease{100, 1}}, {"long_grace", Lease{5, 31}}};
  const Lease assumed = assumed_lease(5);
  for (const char* n : {"short", "none"}) {
    CAPTURE(n);
    CHECK(lease_before_ready(remembered, n, 5).fence_after == assumed.fence_after);
    CHECK(lease_before_ready(remembered, n, 5).grace == assumed.grace);
  }
  CHECK(lease_before_ready(remembered, "long_fence", 5).fence_after == 100);  // 101 s > 60 s
  CHECK(lease_before_ready(remembered, "long_grace", 5).grace == 31);         // 62 s > 60 s

  // The hub holds such a node for the assumed lease, and after its READY for its own.
  TempDir tmp;
  HubOptions o = remembering_hub(tmp, Lease{2, 1});
  Hub hub(o, nullptr);
  hub.confirm_reports("n0", {{"a", 10}});
  CHECK(hub.agent("n0")->fence_limit == Approx(3 + 30 + 30));  // not 3 + 2 + 1
  RawPeer peer(hub.endpoint());
  Ready r;
  r.node = "n0";
  r.lease = Lease{2, 1};
  peer.send(r);
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(hub.agent("n0")->fence_limit == Approx(3 + 2 + 1));  // its own, heard now
}
