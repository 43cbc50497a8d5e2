#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "channel/agent.hpp"
#include "channel/hub.hpp"
#include "channel_test_util.hpp"

using namespace sia::channel;
using namespace sia::channel::test;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

AgentOptions fast_agent(const std::string& connect, const std::string& node = "n0") {
  AgentOptions o;
  o.connect = connect;
  o.node = node;
  o.heartbeat_interval = 0.05;
  o.heartbeat_liveness = 3;
  o.fence_after = 5;
  o.backoff_min = 0.05;
  o.backoff_max = 0.2;
  o.report_scan_interval = 0.02;
  o.log = [](const std::string&) {};
  return o;
}

// For the tests that play the controller by hand (RawController): it sends nothing the
// test does not send, so the agent must not count its silence as the controller lost
// (after heartbeat_interval x heartbeat_liveness it would close the session and say
// READY again on a fresh socket, which the test does not expect).
AgentOptions patient_agent(const std::string& connect) {
  AgentOptions o = fast_agent(connect);
  o.heartbeat_liveness = 200;  // 10 s
  o.fence_after = 60;
  return o;
}

// Steps the agent and polls the hub until the agent has its answer to READY.
bool wait_connected(Hub& hub, Agent& agent, int ms = 5000) {
  auto end = std::chrono::steady_clock::now() + milliseconds(ms);
  while (!agent.connected() && std::chrono::steady_clock::now() < end) {
    agent.step(milliseconds(0));
    hub.poll(milliseconds(5));
  }
  return agent.connected();
}

HubOptions fast_hub(const std::string& bind) {
  HubOptions o;
  o.bind = bind;
  o.heartbeat_interval = 0.05;
  o.heartbeat_liveness = 3;
  o.fence_after = 5;
  o.log = [](const std::string&) {};
  return o;
}

json placement(const std::string& tag) {
  return {{"apiVersion", "sia/v1"}, {"kind", "Placement"}, {"data", {{"tag", tag}}}};
}

Assign assign_of(std::int64_t round, std::int64_t seq, const std::string& tag) {
  Assign a;
  a.round = round;
  a.seq = seq;
  a.placement = placement(tag);
  return a;
}

// A ROUTER standing in for the controller, to send exactly what a test needs.
class RawController {
 public:
  explicit RawController(const std::string& endpoint) : sock_(ctx_, zmq::socket_type::router) {
    sock_.set(zmq::sockopt::linger, 0);
    sock_.bind(endpoint);
  }
  // The next message from an agent within `ms` while stepping `agent`.
  std::optional<Message> recv(Agent& agent, int ms = 2000) {
    auto end = std::chrono::steady_clock::now() + milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      agent.step(milliseconds(0));
      zmq::pollitem_t item{sock_.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, milliseconds(5));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t id, m;
      (void)sock_.recv(id);
      (void)sock_.recv(m);
      rid_ = id.to_string();
      return decode(m.to_string());
    }
    return std::nullopt;
  }
  template <typename T>
  std::optional<T> next(Agent& agent, int ms = 2000) {
    auto end = std::chrono::steady_clock::now() + milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      auto m = recv(agent, 20);
      if (m && std::holds_alternative<T>(*m)) return std::get<T>(*m);
    }
    return std::nullopt;
  }
  void send(const Message& m) {
    sock_.send(zmq::buffer(rid_), zmq::send_flags::sndmore);
    sock_.send(zmq::buffer(encode(m)), zmq::send_flags::none);
  }

 private:
  zmq::context_t ctx_;
  zmq::socket_t sock_;
  std::string rid_;
};

}  // namespace

TEST_CASE("an agent says READY and applies an ASSIGN once", "[agent]") {
  TempDir tmp;
  Hub hub(fast_hub("ipc://" + tmp / "ctl"), nullptr);
  FakeNode node;
  AgentOptions ao = fast_agent(hub.endpoint());
  ao.inventory = {"t4", 4, "10.0.0.9"};
  Agent agent(ao, node);
  bool found = false;
  auto events = drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().ready.inventory.gpus == 4);
  CHECK(events.back().ready.inventory.address == "10.0.0.9");

  auto seq = hub.assign("n0", 1, placement("a"), json::object());
  REQUIRE(seq);
  events = drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ack; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().ack.seq == *seq);
  CHECK(events.back().ack.ok);
  CHECK(node.applies == 1);
  CHECK(node.last_placement == placement("a"));
}

TEST_CASE("an agent's READY says its lease: fence_after and its stops' grace", "[agent][lease]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  AgentOptions o = patient_agent("ipc://" + tmp / "ctl");
  o.stop_grace = 7;
  Agent agent(o, node);
  auto ready = ctl.next<Ready>(agent);
  REQUIRE(ready);
  REQUIRE(ready->lease);
  CHECK(ready->lease->fence_after == 60);
  CHECK(ready->lease->grace == agent_lease(60, 7).grace);
}

TEST_CASE("a repeated ASSIGN is answered from the cache, never applied twice", "[agent]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  Agent agent(patient_agent("ipc://" + tmp / "ctl"), node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  Assign a;
  a.round = 4;
  a.seq = 9;
  a.placement = placement("a");
  ctl.send(a);
  auto ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->round == 4);
  CHECK(ack->seq == 9);
  CHECK(node.applies == 1);

  ctl.send(a);  // the controller did not see the ACK and resends
  ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->seq == 9);
  CHECK(node.applies == 1);
  CHECK(agent.acks_from_cache() == 1);

  // The same (round, seq) with other content is not the same assignment.
  a.placement = placement("b");
  ctl.send(a);
  REQUIRE(ctl.next<Ack>(agent));
  CHECK(node.applies == 2);
}

TEST_CASE("a repeat that arrives while applying is not applied again", "[agent]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  node.hold = true;
  Agent agent(patient_agent("ipc://" + tmp / "ctl"), node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  Assign a;
  a.round = 1;
  a.seq = 1;
  a.placement = placement("a");
  ctl.send(a);
  ctl.send(a);
  ctl.send(a);
  CHECK_FALSE(ctl.next<Ack>(agent, 200));
  CHECK(node.applies == 1);
  // A newer assignment waits for the running one.
  Assign b = a;
  b.seq = 2;
  b.placement = placement("b");
  ctl.send(b);
  CHECK_FALSE(ctl.next<Ack>(agent, 100));
  CHECK(node.applies == 1);
  node.hold = false;
  auto ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->seq == 1);
  ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->seq == 2);
  CHECK(node.applies == 2);
}

TEST_CASE("an ASSIGN older than one taken is refused and logged, never applied", "[agent]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  node.hold = true;
  AgentOptions ao = patient_agent("ipc://" + tmp / "ctl");
  std::vector<std::string> lines;
  ao.log = [&](const std::string& l) { lines.push_back(l); };
  Agent agent(ao, node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  Assign newer;
  newer.round = 4;
  newer.seq = 9;
  newer.placement = placement("new");
  ctl.send(newer);
  // While it is applied, an older one comes (delayed past it): not queued behind it.
  Assign older = newer;
  older.seq = 8;
  older.placement = placement("old");
  ctl.send(older);
  CHECK_FALSE(ctl.next<Ack>(agent, 200));
  node.hold = false;
  auto ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->seq == 9);
  CHECK_FALSE(ctl.next<Ack>(agent, 200));
  CHECK(node.applies == 1);
  CHECK(node.last_placement == placement("new"));
  // Once applied, a duplicate of an older round (any seq) is refused too.
  Assign earlier = older;
  earlier.round = 3;
  earlier.seq = 50;
  ctl.send(earlier);
  ctl.send(earlier);  // resent: refused again, said once
  CHECK_FALSE(ctl.next<Ack>(agent, 200));
  CHECK(node.applies == 1);
  CHECK(agent.stale_refused() == 3);
  int said = 0;
  for (const auto& l : lines) {
    said += l.find("seq 8: refused, older than round 4 seq 9") != std::string::npos ||
            l.find("round 3 seq 50: refused, older than round 4 seq 9") == 0;
  }
  CHECK(said == 2);
  // The exact repeat of the newest is answered from the cache; a newer round is applied
  // (a restarted controller's seq may be lower: its round is higher).
  ctl.send(newer);
  ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(agent.acks_from_cache() == 1);
  Assign next = newer;
  next.round = 5;
  next.seq = 1;
  next.placement = placement("next");
  ctl.send(next);
  ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->round == 5);
  CHECK(node.applies == 2);
  // A controller that does not know the agent (restarted, its rounds maybe from 1 again)
  // gets a READY, and its ASSIGNs are taken whatever their number.
  ctl.send(ErrorMessage{"not_ready", "who are you?"});
  REQUIRE(ctl.next<Ready>(agent));
  Assign first = newer;
  first.round = 1;
  first.seq = 1;
  first.placement = placement("first");
  ctl.send(first);
  ack = ctl.next<Ack>(agent);
  REQUIRE(ack);
  CHECK(ack->round == 1);
  CHECK(node.applies == 3);
}

TEST_CASE("an agent forwards report lines from what the controller stored", "[agent]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  node.add_report("j", R"({"step":1})");  // offset 0, 11 bytes with the newline
  node.add_report("j", R"({"step":2})");  // offset 11
  node.add_report("k", R"({"step":1})");
  Agent agent(patient_agent("ipc://" + tmp / "ctl"), node);
  auto ready = ctl.next<Ready>(agent);
  REQUIRE(ready);
  CHECK(ready->offsets == Offsets{{"j", 22}, {"k", 11}});
  // No report before the controller says how far it has them.
  CHECK_FALSE(ctl.next<Report>(agent, 150));
  Heartbeat h;
  h.acked = {{"j", 11}, {"k", 11}};
  ctl.send(h);
  auto rep = ctl.next<Report>(agent);
  REQUIRE(rep);
  REQUIRE(rep->lines.size() == 1);
  CHECK(rep->lines[0].job == "j");
  CHECK(rep->lines[0].offset == 11);
  // New lines only, once.
  node.add_report("k", R"({"step":2})");
  rep = ctl.next<Report>(agent);
  REQUIRE(rep);
  REQUIRE(rep->lines.size() == 1);
  CHECK(rep->lines[0].job == "k");
  CHECK(rep->lines[0].offset == 11);
  CHECK_FALSE(ctl.next<Report>(agent, 150));
}

TEST_CASE("an agent reconnects after the hub restarts", "[agent]") {
  TempDir tmp;
  std::string ep = "ipc://" + tmp / "ctl";
  FakeNode node;
  Agent agent(fast_agent(ep), node);
  bool found = false;
  {
    Hub hub(fast_hub(ep), nullptr);
    drive(
        hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000,
        &found);
    REQUIRE(found);
    // The hub said READY at once; the agent is connected when its answer has come.
    CHECK(wait_connected(hub, agent));
  }
  int first = agent.sessions();
  // The controller is gone for a while: the agent notices and retries with back-off.
  auto end = std::chrono::steady_clock::now() + milliseconds(3000);
  while (agent.connected() && std::chrono::steady_clock::now() < end) {
    agent.step(milliseconds(10));
  }
  CHECK_FALSE(agent.connected());
  end = std::chrono::steady_clock::now() + milliseconds(300);  // and retries a few times
  while (std::chrono::steady_clock::now() < end) agent.step(milliseconds(10));
  Hub hub(fast_hub(ep), nullptr);
  auto events = drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().node == "n0");
  // On a fresh socket (the READY that reaches the new hub may have been queued on a
  // socket the agent opened before the hub was back).
  CHECK(agent.sessions() > first);
  CHECK(wait_connected(hub, agent));
  // And it serves the new hub.
  auto seq = hub.assign("n0", 2, placement("a"), json::object());
  REQUIRE(seq);
  drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ack; }, 3000, &found);
  CHECK(found);
}

TEST_CASE("a restarted hub gets a READY at once on the old connection", "[agent]") {
  TempDir tmp;
  std::string ep = "ipc://" + tmp / "ctl";
  FakeNode node;
  AgentOptions ao = fast_agent(ep);
  ao.heartbeat_liveness = 100;  // it would take 5 s to notice the silence
  Agent agent(ao, node);
  bool found = false;
  {
    Hub hub(fast_hub(ep), nullptr);
    drive(
        hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000,
        &found);
    REQUIRE(found);
  }
  Hub hub(fast_hub(ep), nullptr);
  auto t0 = std::chrono::steady_clock::now();
  drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(std::chrono::steady_clock::now() - t0 < milliseconds(2000));
}

TEST_CASE("an agent without its controller fences: stops the jobs once", "[agent]") {
  TempDir tmp;
  FakeNode node;
  AgentOptions ao = fast_agent("ipc://" + tmp / "nobody");
  ao.fence_after = 0.15;
  Agent agent(ao, node);
  auto end = std::chrono::steady_clock::now() + milliseconds(500);
  while (std::chrono::steady_clock::now() < end) agent.step(milliseconds(10));
  CHECK(agent.fenced());
  CHECK(node.stops == 1);
  CHECK(node.applies == 0);
}

TEST_CASE("a fence during an apply stops the jobs only once the apply has ended",
          "[agent][lease]") {
  // What the lease must count (lease.hpp): the fence's stop waits for an apply begun before
  // it, which may still start a generation.
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  node.hold = true;
  AgentOptions o = fast_agent("ipc://" + tmp / "ctl");
  o.fence_after = 0.15;
  Agent agent(o, node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  ctl.send(assign_of(1, 1, "a"));
  auto step_for = [&](int ms) {
    auto end = std::chrono::steady_clock::now() + milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) agent.step(milliseconds(5));
  };
  step_for(400);  // the controller says nothing more: past fence_after
  CHECK(agent.fenced());
  CHECK(node.applies == 1);
  CHECK(node.stops == 0);  // the apply still runs
  node.hold = false;
  step_for(100);
  CHECK(node.stops == 1);
}

TEST_CASE("the agent's heartbeats keep it up on the hub", "[agent]") {
  TempDir tmp;
  Hub hub(fast_hub("ipc://" + tmp / "ctl"), nullptr);
  FakeNode node;
  Agent agent(fast_agent(hub.endpoint()), node);
  bool found = false;
  drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  auto events = drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::down; }, 500, &found);
  CHECK_FALSE(found);
  CHECK(hub.nodes_up() == std::vector<std::string>{"n0"});
  CHECK_FALSE(agent.fenced());
}

TEST_CASE("stopping an agent stops its jobs and says BYE", "[agent]") {
  TempDir tmp;
  Hub hub(fast_hub("ipc://" + tmp / "ctl"), nullptr);
  FakeNode node;
  Agent agent(fast_agent(hub.endpoint()), node);
  bool found = false;
  drive(
      hub, {&agent}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  std::atomic<int> stop{1};
  CHECK(agent.run(stop, false) == 0);
  CHECK(node.stops == 1);
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::fenced; }, 3000, &found);
  REQUIRE(found);
  REQUIRE(has_event(events, HubEventType::bye, "n0"));
  for (const auto& e : events) {
    if (e.type == HubEventType::bye) CHECK(e.bye.stopped);
  }
}

TEST_CASE("an agent with a wrong server key logs the failed handshake", "[agent][curve]") {
  KeyPair server = generate_keypair();
  KeyPair mine = generate_keypair();
  KeyPair other = generate_keypair();
  HubOptions ho = fast_hub("tcp://127.0.0.1:*");
  ho.server_key = server;
  AllowList allow;
  allow.add(mine.public_key, Identity{Identity::Kind::agent, "n0", "", true});
  ho.allow = allow;
  Hub hub(ho, nullptr);
  FakeNode node;
  AgentOptions ao = patient_agent(hub.endpoint());
  ao.keys = ClientKeys{other.public_key, mine};  // not the controller's key
  std::vector<std::string> log;
  ao.log = [&](const std::string& l) { log.push_back(l); };
  Agent agent(ao, node);
  auto failed = [&] {
    for (const auto& l : log) {
      if (l.find("the CURVE handshake with " + hub.endpoint() + " failed") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  auto end = std::chrono::steady_clock::now() + milliseconds(8000);
  while (!failed() && std::chrono::steady_clock::now() < end) {
    agent.step(milliseconds(0));
    hub.poll(milliseconds(5));
  }
  CHECK(failed());
  CHECK_FALSE(agent.connected());
  CHECK(hub.nodes_up().empty());
}

TEST_CASE("an agent answers LOG_FETCH from its node's logs", "[agent][logs]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  Agent agent(patient_agent("ipc://" + tmp / "ctl"), node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  ctl.send(LogFetch{"1", "j", 0, 20, 0, 1 << 20});
  auto d = ctl.next<LogData>(agent);
  REQUIRE(d);
  CHECK(d->id == "1");
  CHECK(d->node == "n0");
  CHECK_FALSE(d->ok);
  CHECK(d->status == 66);
  CHECK(d->error == "no log of j here");
  node.log = {{"text", "boom\n"}, {"next", 5}};
  ctl.send(LogFetch{"2", "j", 0, 20, 0, 1 << 20});
  d = ctl.next<LogData>(agent);
  REQUIRE(d);
  CHECK(d->ok);
  CHECK(d->log["text"] == "boom\n");
}

TEST_CASE("a heartbeat carries the RunStatus when a job's state changed", "[agent][logs]") {
  TempDir tmp;
  RawController ctl("ipc://" + tmp / "ctl");
  FakeNode node;
  node.status["jobs"] = {{{"name", "f"}, {"state", "stopping"}}};
  Agent agent(patient_agent("ipc://" + tmp / "ctl"), node);
  REQUIRE(ctl.next<Ready>(agent));
  ctl.send(Heartbeat{});
  auto h = ctl.next<Heartbeat>(agent);
  REQUIRE(h);
  CHECK(h->jobs == json{{"f", "stopping"}});
  CHECK(h->run_status.is_object());  // the first: changed from nothing
  h = ctl.next<Heartbeat>(agent);
  REQUIRE(h);
  CHECK(h->run_status.is_null());  // nothing changed
  node.status["jobs"] = {
      {{"name", "f"}, {"state", "failed"}, {"failed_rank", 0}, {"log_tail", "boom\n"}}};
  h = ctl.next<Heartbeat>(agent);
  REQUIRE(h);
  CHECK(h->jobs == json{{"f", "failed"}});
  REQUIRE(h->run_status.is_object());
  CHECK(h->run_status["jobs"][0]["log_tail"] == "boom\n");
}

TEST_CASE("an agent whose node is not in the cluster is refused at READY and exits 78", "[agent]") {
  TempDir tmp;
  HubOptions ho = fast_hub("ipc://" + tmp / "ctl");
  ho.nodes = {"t4-0", "t4-1"};
  ho.cluster_name = "lab";
  std::vector<std::string> logged;
  ho.log = [&](const std::string& l) { logged.push_back(l); };
  Hub hub(ho, nullptr);
  FakeNode node;
  Agent agent(fast_agent(hub.endpoint(), "n9"), node);
  std::optional<sia::Error> error;
  std::vector<HubEvent> events;
  auto end = std::chrono::steady_clock::now() + milliseconds(5000);
  while (!error && std::chrono::steady_clock::now() < end) {
    try {
      agent.step(milliseconds(0));
    } catch (const sia::Error& e) {
      error = e;
    }
    for (auto& e : hub.poll(milliseconds(5))) events.push_back(std::move(e));
  }
  REQUIRE(error);
  CHECK(error->status() == sia::ExitStatus::config);
  CHECK(std::string(error->what()).find("node \"n9\" is not in cluster lab") != std::string::npos);
  CHECK(has_event(events, HubEventType::refused));
  CHECK_FALSE(has_event(events, HubEventType::ready));
  CHECK_FALSE(hub.agent("n9"));
  CHECK(node.applies == 0);
}

TEST_CASE("a fake controller without the pinned key is not trusted by the agent",
          "[agent][curve]") {
  KeyPair real = generate_keypair();
  KeyPair fake = generate_keypair();
  KeyPair mine = generate_keypair();
  // Whoever binds first: a CURVE server with a key of its own that accepts any client
  // (no ZAP handler), ready to send an ASSIGN to whatever says READY.
  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::curve_server, 1);
  router.set(zmq::sockopt::curve_secretkey, fake.secret_key);
  router.bind("tcp://127.0.0.1:*");
  const std::string ep = router.get(zmq::sockopt::last_endpoint);
  FakeNode node;
  AgentOptions ao = patient_agent(ep);
  ao.keys = ClientKeys{real.public_key, mine};  // pinned: the real controller's key
  Agent agent(ao, node);
  int received = 0;
  auto end = std::chrono::steady_clock::now() + milliseconds(1500);
  while (std::chrono::steady_clock::now() < end) {
    agent.step(milliseconds(0));
    zmq::pollitem_t item{router.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, milliseconds(5));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t id, m;
    (void)router.recv(id);
    (void)router.recv(m);
    ++received;
    Assign a;
    a.round = 1;
    a.seq = 1;
    a.placement = placement("x");
    router.send(id, zmq::send_flags::sndmore);
    router.send(zmq::buffer(encode(a)), zmq::send_flags::none);
  }
  CHECK(received == 0);  // the handshake never completes: not even READY reaches it
  CHECK(node.applies == 0);
  CHECK_FALSE(agent.connected());
}
