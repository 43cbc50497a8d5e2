#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "channel/client_rpc.hpp"
#include "channel/hub.hpp"
#include "channel_test_util.hpp"
#include "test_util.hpp"

using namespace sia::channel;
using namespace sia::channel::test;
using nlohmann::json;
using sia::test::error_of;
using std::chrono::milliseconds;

namespace {

HubOptions fast_options(const std::string& bind) {
  HubOptions o;
  o.bind = bind;
  o.heartbeat_interval = 0.05;
  o.heartbeat_liveness = 3;
  o.fence_after = 5;
  o.log = [](const std::string&) {};
  return o;
}

// Runs `fn` on another thread while polling `hub`; returns fn's result (or rethrows).
template <typename F>
auto while_polling(Hub& hub, F fn, std::vector<HubEvent>* events = nullptr) {
  auto fut = std::async(std::launch::async, fn);
  while (fut.wait_for(milliseconds(0)) != std::future_status::ready) {
    for (auto& e : hub.poll(milliseconds(5))) {
      if (events) events->push_back(std::move(e));
    }
  }
  for (auto& e : hub.poll(milliseconds(20))) {
    if (events) events->push_back(std::move(e));
  }
  return fut.get();
}

struct CurveSetup {
  KeyPair server = generate_keypair();
  KeyPair agent = generate_keypair();
  KeyPair alice = generate_keypair();
  KeyPair stranger = generate_keypair();
  AllowList allow;
  CurveSetup() {
    allow.add(agent.public_key, Identity{Identity::Kind::agent, "t4-0", "", true});
    allow.add(alice.public_key, Identity{Identity::Kind::client, "alice", "", true});
  }
  ClientKeys keys(const KeyPair& own) const { return {server.public_key, own}; }
};

// An assignment whose content differs by `tag`.
json placement(const std::string& tag) {
  return {{"apiVersion", "sia/v1"}, {"kind", "Placement"}, {"data", {{"tag", tag}}}};
}

// The next T `peer` receives within `ms`. The hub has no thread of its own: when the
// answer has still to be made, pass the hub so that it is polled meanwhile.
template <typename T>
std::optional<T> next_of(RawPeer& peer, Hub* hub = nullptr, int ms = 3000) {
  auto end = std::chrono::steady_clock::now() + milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (hub) hub->poll(milliseconds(5));
    auto m = peer.recv(hub ? 1 : 20);
    if (m && std::holds_alternative<T>(*m)) return std::get<T>(*m);
  }
  return std::nullopt;
}

// Says READY for `node` on `peer` and polls `hub` until it took it.
void say_ready(Hub& hub, RawPeer& peer, const std::string& node = "n0") {
  peer.send(Ready{node, {}, json::object(), {}, std::nullopt});
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
}

// A hub on fast_options whose peer has said READY for n0: where the agent cases start.
struct ReadyHub {
  TempDir tmp;
  Hub hub{fast_options("ipc://" + tmp / "ctl"), nullptr};
  RawPeer peer{hub.endpoint()};
  ReadyHub() { say_ready(hub, peer); }
};

}  // namespace

TEST_CASE("a client's request reaches the handler and its reply comes back", "[hub]") {
  TempDir tmp;
  std::vector<std::pair<Identity, Request>> seen;
  Hub hub(fast_options("ipc://" + tmp / "ctl"), [&](const Identity& who, const Request& r) {
    seen.emplace_back(who, r);
    Reply reply;
    reply.document = {{"kind", "NodeList"}};
    return reply;
  });
  ClientOptions co;
  co.endpoint = hub.endpoint();
  co.client = "alice";
  co.timeout = 5;
  Request q;
  q.kind = RequestKind::nodes;
  Reply r = while_polling(hub, [&] { return call(co, q); });
  CHECK(r.ok);
  CHECK(r.document == json{{"kind", "NodeList"}});
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first.user_id() == "client:alice");
  CHECK_FALSE(seen[0].first.authenticated);
  CHECK(seen[0].second.kind == RequestKind::nodes);

  // A failed reply is returned as such; call_document throws its status.
  Hub hub2(fast_options("ipc://" + tmp / "ctl2"), [](const Identity&, const Request&) -> Reply {
    throw sia::Error(sia::ExitStatus::temp_fail, "round lock held by pid 7; retry later");
  });
  co.endpoint = hub2.endpoint();
  auto [status, message] =
      while_polling(hub2, [&] { return error_of([&] { call_document(co, q); }); });
  CHECK(status == 75);
  CHECK(message == "round lock held by pid 7; retry later");
}

TEST_CASE("nothing answering is status 69", "[hub]") {
  TempDir tmp;
  ClientOptions co;
  co.endpoint = "ipc://" + tmp / "nobody";
  co.timeout = 0.2;
  auto [status, message] = error_of([&] { call(co, Request{}); });
  CHECK(status == 69);
  CHECK(message ==
        "no answer from " + co.endpoint + " within 0.2 s (is sia-ctl serve running there?)");
}

TEST_CASE("CURVE: only keys on the allow-list get through", "[hub][curve]") {
  CurveSetup s;
  int handled = 0;
  HubOptions o = fast_options("tcp://127.0.0.1:*");
  o.server_key = s.server;
  o.allow = s.allow;
  Hub hub(o, [&](const Identity& who, const Request&) {
    ++handled;
    Reply r;
    r.document = {{"who", who.user_id()},
                  {"key", who.key},
                  {"auth", who.authenticated},
                  {"admin", who.admin}};
    return r;
  });
  ClientOptions co;
  co.endpoint = hub.endpoint();
  co.timeout = 3;

  SECTION("an allowed client is answered, as the name its key has") {
    co.keys = s.keys(s.alice);
    Reply r = while_polling(hub, [&] { return call(co, Request{}); });
    CHECK(r.ok);
    CHECK(r.document["who"] == "client:alice");
    CHECK(r.document["key"] == s.alice.public_key);
    CHECK(r.document["auth"] == true);
    CHECK(r.document["admin"] == false);
  }
  SECTION("an admin key is known as one") {
    KeyPair root = generate_keypair();
    AllowList allow = s.allow;
    Identity admin{Identity::Kind::client, "root", "", true};
    admin.admin = true;
    allow.add(root.public_key, admin);
    hub.set_allow_list(allow);
    co.keys = s.keys(root);
    Reply r = while_polling(hub, [&] { return call(co, Request{}); });
    CHECK(r.document["who"] == "client:root");
    CHECK(r.document["admin"] == true);
  }
  SECTION("a key not on the allow-list is refused at the handshake and logged") {
    co.keys = s.keys(s.stranger);
    std::vector<HubEvent> events;
    auto [status, message] = while_polling(
        hub, [&] { return error_of([&] { call(co, Request{}); }); }, &events);
    CHECK(status == 77);
    CHECK(message ==
          co.endpoint + " refused this client's key (is it on the controller's allow-list?)");
    CHECK(handled == 0);
    bool logged = false;
    for (const auto& e : events) {
      logged = logged || (e.type == HubEventType::refused &&
                          e.detail.find(s.stranger.public_key) != std::string::npos &&
                          e.detail.find("not in the allow-list") != std::string::npos);
    }
    CHECK(logged);
  }
  SECTION("a wrong server key fails the handshake") {
    // The controller cannot open the HELLO and drops the connection without a word; the
    // client tells that from nothing answering by the connection it had (see client_rpc).
    co.keys = ClientKeys{s.stranger.public_key, s.alice};
    co.timeout = 10;
    auto t0 = std::chrono::steady_clock::now();
    auto [status, message] =
        while_polling(hub, [&] { return error_of([&] { call(co, Request{}); }); });
    CHECK(status == 77);
    CHECK(message == "the CURVE handshake with " + co.endpoint +
                         " failed (is the server key the controller's?)");
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(8));  // not a timeout
    CHECK(handled == 0);
  }
  SECTION("an agent's key may not send client requests") {
    co.keys = s.keys(s.agent);
    std::vector<HubEvent> events;
    Reply r = while_polling(
        hub, [&] { return call(co, Request{}); }, &events);
    CHECK_FALSE(r.ok);
    CHECK(r.status == 77);
    CHECK(r.error == "requests from agent keys are refused");
    CHECK(handled == 0);
    CHECK(has_event(events, HubEventType::refused));
  }
  SECTION("an unauthenticated client on loopback tcp is refused") {
    // sia's client refuses to go without keys (77, saying which to give) ...
    auto [status, message] = error_of([&] { call(co, Request{}); });
    CHECK(status == 77);
    CHECK(message.find("connect " + co.endpoint +
                       ": CURVE is mandatory on tcp, loopback included (an unauthenticated "
                       "client is refused") == 0);
    // ... and a peer that tries anyway (NULL security) never gets past the handshake:
    // libzmq drops a mechanism other than CURVE before any message reaches the hub.
    RawPeer raw(hub.endpoint());
    raw.send(Request{});
    raw.send(Ready{"t4-0", {}, json::object(), {}, std::nullopt});
    auto events = drive(
        hub, {}, [](const HubEvent&) { return false; }, 500);
    CHECK_FALSE(has_event(events, HubEventType::ready));
    CHECK(hub.nodes_up().empty());
    CHECK_FALSE(raw.recv(200));
    CHECK(handled == 0);
  }
}

TEST_CASE("CURVE: an agent may only speak for its own node", "[hub][curve]") {
  CurveSetup s;
  HubOptions o = fast_options("tcp://127.0.0.1:*");
  o.server_key = s.server;
  o.allow = s.allow;
  Hub hub(o, nullptr);
  RawPeer peer(hub.endpoint(), s.keys(s.agent));
  peer.send(Ready{"t4-1", {}, json::object(), {}, std::nullopt});
  bool found = false;
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::refused; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().detail.find("claiming node \"t4-1\"") != std::string::npos);
  CHECK(events.back().detail.find(s.agent.public_key) != std::string::npos);
  CHECK_FALSE(has_event(events, HubEventType::ready));
  auto err = next_of<ErrorMessage>(peer, &hub);
  REQUIRE(err);
  CHECK(err->code == "refused");

  peer.send(Ready{"t4-0", {"t4", 4, "10.0.0.1"}, json::object(), {}, std::nullopt});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().node == "t4-0");
  CHECK(hub.agent("t4-0")->identity.key == s.agent.public_key);
  CHECK(hub.agent("t4-0")->inventory.gpus == 4);

  peer.send(Report{"t4-1", {{"j", 0, "{}"}}});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::refused; }, 3000, &found);
  CHECK(found);
  CHECK_FALSE(has_event(events, HubEventType::reports));

  // A client key may not say READY.
  RawPeer alice(hub.endpoint(), s.keys(s.alice));
  alice.send(Ready{"alice", {}, json::object(), {}, std::nullopt});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::refused; }, 3000, &found);
  CHECK(found);
  CHECK(hub.nodes_up() == std::vector<std::string>{"t4-0"});
}

TEST_CASE("without CURVE a connection is the node its READY claims", "[hub]") {
  TempDir tmp;
  Hub hub(fast_options("ipc://" + tmp / "ctl"), nullptr);
  RawPeer peer(hub.endpoint());
  peer.send(Heartbeat{"n0", json::object(), false, {}, nullptr});
  auto err = next_of<ErrorMessage>(peer, &hub);
  REQUIRE(err);
  CHECK(err->code == "not_ready");

  peer.send(Ready{"n0", {}, json::object(), {}, std::nullopt});
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  peer.send(Heartbeat{"n1", json::object(), false, {}, nullptr});
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::refused; }, 3000, &found);
  CHECK(found);
  peer.send(Ready{"n1", {}, json::object(), {}, std::nullopt});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::refused; }, 3000, &found);
  CHECK(found);
  CHECK(hub.nodes_up() == std::vector<std::string>{"n0"});

  // An agent's connection may not send client requests either.
  peer.send(Request{RequestKind::submit, "x", "", json::object()});
  auto reply = next_of<Reply>(peer, &hub);
  REQUIRE(reply);
  CHECK(reply->status == 77);
}

TEST_CASE("bad messages and other versions are answered with an ERROR", "[hub]") {
  TempDir tmp;
  std::vector<std::string> log;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.log = [&](const std::string& l) { log.push_back(l); };
  Hub hub(o, nullptr);
  RawPeer peer(hub.endpoint());
  peer.send_raw(R"({"v":2,"type":"READY","node":"n0"})");
  hub.poll(milliseconds(200));
  auto err = next_of<ErrorMessage>(peer, &hub);
  REQUIRE(err);
  CHECK(err->code == "version");
  CHECK(err->error == "unsupported protocol version 2 (this side speaks version 1)");
  peer.send_raw("not json at all");
  hub.poll(milliseconds(200));
  err = next_of<ErrorMessage>(peer, &hub);
  REQUIRE(err);
  CHECK(err->code == "malformed");
  REQUIRE(log.size() >= 2);
  CHECK(log[0].find("unsupported protocol version 2") != std::string::npos);
}

TEST_CASE("an ASSIGN is resent until acknowledged", "[hub]") {
  TempDir tmp;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.resend_interval = 0.02;
  Hub hub(o, nullptr);
  CHECK_FALSE(hub.assign("n0", 1, placement("a"), json::object()));  // not known yet
  RawPeer peer(hub.endpoint());
  peer.send(Ready{"n0", {}, json::object(), {}, std::nullopt});
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  auto seq = hub.assign("n0", 7, placement("a"), json::object());
  REQUIRE(seq);
  int copies = 0;
  auto end = std::chrono::steady_clock::now() + milliseconds(300);
  while (std::chrono::steady_clock::now() < end) {
    hub.poll(milliseconds(5));
    if (auto m = peer.recv(1); m && std::holds_alternative<Assign>(*m)) {
      CHECK(std::get<Assign>(*m).seq == *seq);
      ++copies;
    }
  }
  CHECK(copies >= 3);
  CHECK(hub.agent("n0")->pending == std::make_pair(std::int64_t{7}, *seq));

  Ack wrong;
  wrong.round = 7;
  wrong.seq = *seq + 100;
  peer.send(wrong);
  auto events = hub.poll(milliseconds(100));
  CHECK_FALSE(has_event(events, HubEventType::ack));
  Ack ack;
  ack.round = 7;
  ack.seq = *seq;
  ack.run_status = {{"jobs", json::array()}};
  peer.send(ack);
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ack; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().ack.seq == *seq);
  CHECK_FALSE(hub.agent("n0")->pending);
  // No more copies after the ACK.
  hub.poll(milliseconds(50));
  while (peer.recv(1)) {
  }
  copies = 0;
  end = std::chrono::steady_clock::now() + milliseconds(150);
  while (std::chrono::steady_clock::now() < end) {
    hub.poll(milliseconds(5));
    if (auto m = peer.recv(1); m && std::holds_alternative<Assign>(*m)) ++copies;
  }
  CHECK(copies == 0);
}

TEST_CASE("heartbeats mark an agent down, up again, then fenced", "[hub]") {
  TempDir tmp;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.heartbeat_interval = 0.03;
  o.heartbeat_liveness = 2;
  Hub hub(o, nullptr);
  RawPeer peer(hub.endpoint());
  // Its lease: fenced 0.2 s after it went down (and grace 0: its jobs end at once).
  const Lease lease{0.2, 0};
  peer.send(Ready{"n0", {}, json::object(), {}, lease});
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  CHECK(hub.nodes_up() == std::vector<std::string>{"n0"});

  auto t0 = std::chrono::steady_clock::now();
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::down; }, 3000, &found);
  REQUIRE(found);
  CHECK(std::chrono::steady_clock::now() - t0 >= milliseconds(50));
  CHECK(hub.nodes_up().empty());
  CHECK(hub.agent("n0")->connected);

  peer.send(Heartbeat{"n0", json::object(), false, {}, nullptr});
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::up; }, 3000, &found);
  REQUIRE(found);
  CHECK(hub.nodes_up() == std::vector<std::string>{"n0"});

  auto seq = hub.assign("n0", 3, placement("x"), json::object());
  REQUIRE(seq);
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::fenced; }, 3000, &found);
  REQUIRE(found);
  auto view = hub.agent("n0");
  CHECK(view->fenced);
  CHECK_FALSE(view->pending);  // its ASSIGN is void: its jobs may run elsewhere
  CHECK_FALSE(hub.assign("n0", 4, placement("y"), json::object()));
  // Anything but READY is now told to say READY.
  while (peer.recv(1)) {
  }
  peer.send(Heartbeat{"n0", json::object(), false, {}, nullptr});
  hub.poll(milliseconds(50));
  auto err = next_of<ErrorMessage>(peer, &hub);
  REQUIRE(err);
  CHECK(err->code == "not_ready");
  peer.send(Ready{"n0", {}, json::object(), {}, std::nullopt});
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  CHECK(found);
  CHECK_FALSE(hub.agent("n0")->fenced);
}

TEST_CASE_METHOD(ReadyHub, "an agent that says BYE after stopping its jobs is fenced at once",
                 "[hub]") {
  bool found = false;
  peer.send(Bye{"n0", "signal", true, json::object()});
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::fenced; }, 3000, &found);
  REQUIRE(found);
  CHECK(has_event(events, HubEventType::bye, "n0"));
  CHECK(has_event(events, HubEventType::down, "n0"));
}

TEST_CASE_METHOD(ReadyHub, "report lines are handed out once, by (node, job, offset)", "[hub]") {
  bool found = false;
  Report r{"n0", {{"j", 0, R"({"a":1})"}, {"j", 8, R"({"a":2})"}}};
  peer.send(r);
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::reports; }, 3000, &found);
  REQUIRE(found);
  CHECK(events.back().lines.size() == 2);
  peer.send(r);  // a resend after a reconnect
  peer.send(Report{"n0", {{"j", 8, R"({"a":2})"}, {"j", 16, R"({"a":3})"}}});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::reports; }, 3000, &found);
  REQUIRE(found);
  REQUIRE(events.back().lines.size() == 1);
  CHECK(events.back().lines[0].offset == 16);
  // Handed out and polled again: stored; the next heartbeat tells the agent.
  hub.poll(milliseconds(0));
  CHECK(hub.agent("n0")->confirmed == Offsets{{"j", 24}});
  auto end = std::chrono::steady_clock::now() + milliseconds(1000);
  Offsets acked;
  while (std::chrono::steady_clock::now() < end && acked.empty()) {
    hub.poll(milliseconds(5));
    if (auto m = peer.recv(1); m && std::holds_alternative<Heartbeat>(*m)) {
      acked = std::get<Heartbeat>(*m).acked;
    }
  }
  CHECK(acked == Offsets{{"j", 24}});
}

TEST_CASE_METHOD(ReadyHub, "a late or repeated ACK counts once, and only the current ASSIGN's",
                 "[hub][fault5]") {
  auto first = hub.assign("n0", 7, placement("a"), json::object());
  auto second = hub.assign("n0", 8, placement("b"), json::object());  // replaces it
  REQUIRE(first);
  REQUIRE(second);
  Ack late;  // the first one's ACK, delayed past the second ASSIGN
  late.round = 7;
  late.seq = *first;
  peer.send(late);
  auto events = drive(
      hub, {}, [](const HubEvent&) { return false; }, 150);
  CHECK_FALSE(has_event(events, HubEventType::ack));
  CHECK(hub.agent("n0")->pending == std::make_pair(std::int64_t{8}, *second));
  Ack ack;
  ack.round = 8;
  ack.seq = *second;
  peer.send(ack);
  peer.send(ack);  // delivered twice
  events = drive(
      hub, {}, [](const HubEvent&) { return false; }, 300);
  int acks = 0;
  for (const auto& e : events) acks += e.type == HubEventType::ack;
  CHECK(acks == 1);
  CHECK_FALSE(hub.agent("n0")->pending);
}

TEST_CASE_METHOD(ReadyHub,
                 "an ACK's RunStatus is not overlaid with an older heartbeat's job states",
                 "[hub][fault5]") {
  // Job c failed on n0 (its peer's node was lost) and the heartbeat said so; the next
  // ASSIGN started c again there and its ACK says c runs. The heartbeat's "failed" is
  // older: laid over the ACK's RunStatus it hid a running generation, and the controller
  // started the next one elsewhere before this one was stopped.
  auto heartbeat_says = [&](const std::string& state) {
    Heartbeat h;
    h.node = "n0";
    h.jobs = {{"c", state}};
    peer.send(h);
    drive(
        hub, {}, [](const HubEvent&) { return false; }, 150);
  };
  heartbeat_says("failed");
  REQUIRE(hub.agent("n0")->jobs == json{{"c", "failed"}});
  auto seq = hub.assign("n0", 4, placement("c again"), json::object());
  REQUIRE(seq);
  Ack ack;
  ack.round = 4;
  ack.seq = *seq;
  ack.run_status = {{"jobs", json::array({json{{"name", "c"}, {"state", "running"}}})}};
  peer.send(ack);
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ack; }, 3000, &found);
  REQUIRE(found);
  auto v = hub.agent("n0");
  CHECK(v->jobs.empty());
  CHECK(v->run_status["jobs"][0]["state"] == "running");
  // The next heartbeat is newer again.
  heartbeat_says("running");
  CHECK(hub.agent("n0")->jobs == json{{"c", "running"}});
}

TEST_CASE_METHOD(ReadyHub,
                 "an old connection's REPORT after a new READY is refused, its lines taken once",
                 "[hub][fault5]") {
  RawPeer& old_conn = peer;
  bool found = false;
  Report r{"n0", {{"j", 0, R"({"a":1})"}}};
  old_conn.send(r);
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::reports; }, 3000, &found);
  REQUIRE(found);
  // The agent reconnects (a fresh socket) and sends from the stored offset again.
  RawPeer new_conn(hub.endpoint());
  say_ready(hub, new_conn);
  old_conn.send(Report{"n0", {{"j", 8, R"({"a":2})"}}});  // in flight on the old one
  auto err = next_of<ErrorMessage>(old_conn, &hub);
  REQUIRE(err);
  CHECK(err->code == "not_ready");
  new_conn.send(Report{"n0", {{"j", 0, R"({"a":1})"}, {"j", 8, R"({"a":2})"}}});
  events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::reports; }, 3000, &found);
  REQUIRE(found);
  REQUIRE(events.back().lines.size() == 1);
  CHECK(events.back().lines[0].offset == 8);
}

TEST_CASE("confirm_reports seeds what a restarted controller has stored", "[hub]") {
  TempDir tmp;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.confirm_on_poll = false;
  Hub hub(o, nullptr);
  hub.confirm_reports("n0", {{"j", 8}});
  CHECK(hub.nodes_up().empty());
  RawPeer peer(hub.endpoint());
  peer.send(Ready{"n0", {}, json::object(), {{"j", 24}}, std::nullopt});
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 3000, &found);
  REQUIRE(found);
  auto hb = next_of<Heartbeat>(peer, &hub);
  REQUIRE(hb);
  CHECK(hb->acked == Offsets{{"j", 8}});  // the answer to READY: resume from here
  peer.send(Report{"n0", {{"j", 0, R"({"a":1})"}, {"j", 8, R"({"a":2})"}}});
  auto events = drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::reports; }, 3000, &found);
  REQUIRE(found);
  REQUIRE(events.back().lines.size() == 1);
  CHECK(events.back().lines[0].offset == 8);
  hub.poll(milliseconds(0));
  CHECK(hub.agent("n0")->confirmed == Offsets{{"j", 8}});  // only confirm_reports confirms
}

TEST_CASE("a LOGS request is answered when the node's agent has read the log", "[hub][logs]") {
  TempDir tmp;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.heartbeat_interval = 1;  // the raw agent below heartbeats by hand
  Hub hub(o, [](const Identity&, const Request&) -> Reply {
    throw sia::Error(sia::ExitStatus::software, "LOGS must not reach the handler");
  });
  hub.set_log_planner(
      [](const Identity&, const Request& r) {
        if (r.args.value("job", "") == "nosuch") {
          throw sia::Error(sia::ExitStatus::no_input, "job \"nosuch\" is not known");
        }
        DeferredLog plan;
        plan.node = r.args.value("job", "") == "elsewhere" ? "t4-9" : "t4-0";
        plan.fetch.job = r.args.value("job", "");
        plan.fetch.rank = 1;
        plan.fetch.tail = 5;
        plan.document = [](const json& log) { return json{{"kind", "JobLog"}, {"data", log}}; };
        return plan;
      },
      0.3);
  RawPeer agent(hub.endpoint());
  agent.send(Ready{"t4-0", {}, json::object(), {}, std::nullopt});
  REQUIRE(next_of<Heartbeat>(agent, &hub));
  ClientOptions co;
  co.endpoint = hub.endpoint();
  co.client = "alice";
  co.timeout = 5;
  Request q{RequestKind::logs, "", "", {{"job", "j"}}};
  auto alive = [&] { agent.send(Heartbeat{"t4-0", json::object(), false, {}, nullptr}); };

  // The agent answers: the client gets the document built from its RunLog data.
  alive();
  auto reply = std::async(std::launch::async, [&] { return call(co, q); });
  auto fetch = next_of<LogFetch>(agent, &hub);
  REQUIRE(fetch);
  CHECK(fetch->job == "j");
  CHECK(fetch->rank == 1);
  CHECK(fetch->tail == 5);
  agent.send(LogData{"t4-0", fetch->id, true, 0, {{"text", "boom\n"}}, ""});
  while (reply.wait_for(milliseconds(0)) != std::future_status::ready) hub.poll(milliseconds(5));
  Reply r = reply.get();
  REQUIRE(r.ok);
  CHECK(r.document["data"]["text"] == "boom\n");

  // The agent's refusal keeps its status and names the node.
  alive();
  reply = std::async(std::launch::async, [&] { return call(co, q); });
  fetch = next_of<LogFetch>(agent, &hub);
  REQUIRE(fetch);
  agent.send(LogData{"t4-0", fetch->id, false, 64, nullptr, "rank 1 is out of range"});
  while (reply.wait_for(milliseconds(0)) != std::future_status::ready) hub.poll(milliseconds(5));
  r = reply.get();
  CHECK_FALSE(r.ok);
  CHECK(r.status == 64);
  CHECK(r.error == "node t4-0: rank 1 is out of range");

  // No answer in time: 69.
  alive();
  reply = std::async(std::launch::async, [&] { return call(co, q); });
  REQUIRE(next_of<LogFetch>(agent, &hub));
  while (reply.wait_for(milliseconds(0)) != std::future_status::ready) hub.poll(milliseconds(5));
  r = reply.get();
  CHECK(r.status == 69);
  CHECK(r.error == "node t4-0 did not answer within 0.3 s: cannot read the log");

  // A node without an agent, and the planner's own refusal: answered at once.
  q.args["job"] = "elsewhere";
  r = while_polling(hub, [&] { return call(co, q); });
  CHECK(r.status == 69);
  CHECK(r.error.find("node t4-9 is down") == 0);
  q.args["job"] = "nosuch";
  r = while_polling(hub, [&] { return call(co, q); });
  CHECK(r.status == 66);

  // A heartbeat with a RunStatus (a job's state changed) replaces the one the hub had.
  agent.send(Heartbeat{"t4-0", {{"f", "failed"}}, false, {}, {{"jobs", {{{"name", "f"}}}}}});
  for (int i = 0; i < 100 && hub.agent("t4-0")->run_status.value("jobs", json::array()).empty();
       ++i) {
    hub.poll(milliseconds(5));
  }
  CHECK(hub.agent("t4-0")->run_status["jobs"][0]["name"] == "f");
}

TEST_CASE("a request over max_request_bytes is refused unread, status 65", "[hub][limits]") {
  CurveSetup s;
  int handled = 0;
  HubOptions o = fast_options("tcp://127.0.0.1:*");
  o.server_key = s.server;
  o.allow = s.allow;
  o.max_request_bytes = 4096;
  Hub hub(o, [&](const Identity&, const Request&) {
    ++handled;
    return Reply{};
  });
  ClientOptions co;
  co.endpoint = hub.endpoint();
  co.timeout = 5;
  co.keys = s.keys(s.alice);
  Request big;
  big.kind = RequestKind::submit;
  big.args = {{"jobs", json::array({{{"name", "j"}, {"command", {std::string(8000, 'x')}}}})}};

  SECTION("by the controller: an ERROR too_large, logged, the handler never called") {
    std::vector<HubEvent> events;
    auto [status, message] = while_polling(
        hub, [&] { return error_of([&] { call(co, big); }); }, &events);
    CHECK(status == 65);
    CHECK(message.find(co.endpoint + " did not take the request: client:alice (key ") == 0);
    CHECK(message.find("bytes, over the limit of 4096 for a request "
                       "(controller.max_request_bytes)") != std::string::npos);
    CHECK(handled == 0);
    CHECK(has_event(events, HubEventType::refused));
    // A small request on the same hub still goes through.
    Reply r = while_polling(hub, [&] { return call(co, Request{}); });
    CHECK(r.ok);
    CHECK(handled == 1);
  }
  SECTION("by the client, before sending, with the same limit") {
    co.max_request_bytes = 4096;
    auto [status, message] = error_of([&] { call(co, big); });
    CHECK(status == 65);
    CHECK(message.find("the SUBMIT request is ") == 0);
    CHECK(message.find(" bytes, over the limit of 4096 (controller.max_request_bytes)") !=
          std::string::npos);
    CHECK(handled == 0);
  }
}

TEST_CASE("an agent's messages are not held to the request limit", "[hub][limits]") {
  TempDir tmp;
  HubOptions o = fast_options("ipc://" + tmp / "ctl");
  o.max_request_bytes = 4096;
  Hub hub(o, nullptr);
  RawPeer agent(hub.endpoint());
  Ready r;
  r.node = "n0";
  r.run_status = {{"node", "n0"}, {"note", std::string(10000, 'r')}};
  agent.send(r);  // unauthenticated (ipc): a READY is an agent's
  bool found = false;
  drive(
      hub, {}, [](const HubEvent& e) { return e.type == HubEventType::ready; }, 5000, &found);
  CHECK(found);
  Heartbeat h;
  h.node = "n0";
  h.run_status = {{"node", "n0"}, {"note", std::string(10000, 'h')}};
  agent.send(h);  // on the connection that said READY
  auto end = std::chrono::steady_clock::now() + milliseconds(5000);
  while (std::chrono::steady_clock::now() < end) {
    hub.poll(milliseconds(5));
    auto v = hub.agent("n0");
    if (v && v->run_status.contains("note") && v->run_status["note"].get<std::string>()[0] == 'h')
      break;
  }
  auto v = hub.agent("n0");
  REQUIRE(v);
  CHECK(v->run_status["note"] == std::string(10000, 'h'));
  // A request from an unknown ipc peer is held to it.
  RawPeer client(hub.endpoint());
  Request q;
  q.id = "q";
  q.args = {{"pad", std::string(5000, 'p')}};
  client.send(q);
  auto e = next_of<ErrorMessage>(client, &hub);
  REQUIRE(e);
  CHECK(e->code == "too_large");
}

TEST_CASE("says_ready finds a READY without parsing the frame", "[protocol][limits]") {
  CHECK(says_ready(encode(Ready{})));
  Request q;
  q.kind = RequestKind::submit;
  CHECK_FALSE(says_ready(encode(q)));
  CHECK_FALSE(says_ready(encode(Heartbeat{})));
  CHECK_FALSE(says_ready("not json"));
  CHECK_FALSE(says_ready(""));
}
