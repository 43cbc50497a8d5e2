// lib/serve: the node part of a placement, report journaling, the clients' service on a
// real state directory, and the HubDriver on a real Hub with a hand-driven DEALER agent.
#include <catch2/catch.hpp>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include <zmq.hpp>

#include "channel/hub.hpp"
#include "channel/protocol.hpp"
#include "core/error.hpp"
#include "ctl/client_backend.hpp"
#include "ctl/ctl_test_util.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/state_store.hpp"
#include "ctl/submission.hpp"
#include "os/clock.hpp"
#include "serve/client_service.hpp"
#include "serve/hub_driver.hpp"
#include "serve/report_journal.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl::test;
using nlohmann::json;

namespace {

json two_job_placement() {
  return {{"cluster_name", "box"},
          {"jobs",
           {{{"name", "a"}, {"gpu_type", "t4"}, {"nodes", {{{"name", "t4-0"}, {"gpus", {0}}}}}},
            {{"name", "b"},
             {"gpu_type", "t4"},
             {"nodes", {{{"name", "t4-0"}, {"gpus", {1}}}, {{"name", "t4-1"}, {"gpus", {0}}}}}}}},
          {"evicted", json::array()},
          {"waiting", json::array()}};
}

// App `name`: one trial per learning rate, scheduler `kind` with eta 2 and 2 rungs.
AppSpec lr_app(const std::string& name, AppSchedulerKind kind, std::vector<double> lrs) {
  AppSpec app;
  app.name = name;
  app.scheduler = {kind, 2, 2};
  app.trial_template = json{{"model", "cifar10"}, {"command", {"/bin/true", "{lr}"}}};
  app.grid = {{"lr", std::move(lrs)}};
  return app;
}

// One controller round on `store` at time `now` with a FakeDriver; the jobs it placed.
std::vector<std::string> round_at(const ctl::Settings& config, const std::string& cluster,
                                  const ctl::StateStore& store, double now) {
  Cluster c = read_cluster(cluster);
  FakeDriver driver(c);
  ctl::RoundOptions o;
  o.now = [now] { return now; };
  auto lock = store.lock("test round");
  ctl::JobBook fresh = store.load(true, nullptr);
  ctl::RoundEngine(config, c, store, driver, o).run(fresh);
  std::vector<std::string> placed;
  for (const auto& d : driver.deliveries) {
    for (const auto& j : d.second.jobs) placed.push_back(j.job);
  }
  return placed;
}

channel::Identity alice() {
  return channel::Identity{channel::Identity::Kind::client, "alice", "KEY", true};
}

// A hub on an ipc socket in `dir`, heartbeats every 0.2 s, a node lost after `liveness`
// missed ones, logging nowhere.
channel::HubOptions fast_hub(const TempDir& dir, int liveness) {
  channel::HubOptions ho;
  ho.bind = "ipc://" + (dir / "hub.sock");
  ho.heartbeat_interval = 0.2;
  ho.heartbeat_liveness = liveness;
  ho.log = [](const std::string&) {};
  return ho;
}

// The HubDriver's clock in these tests: time moves by `step` at each reading (0: it stands
// still, so deliver() waits for every ACK however slow the machine), or by advance().
class StepClock final : public os::Clock {
 public:
  TimePoint now() const override {
    TimePoint t = now_;
    now_ += step;
    return t;
  }
  void sleep_for(Duration d) override { now_ += d; }
  void advance(double seconds) { now_ += os::span(seconds); }
  Duration step{};

 private:
  mutable TimePoint now_{};
};

// An `interrupted` hook for a driver on a clock that stands still: true once `seconds` of
// real time passed, so a broken test fails instead of hanging (never reached when it passes).
std::function<bool()> give_up_after(double seconds) {
  const double end = os::now_seconds() + seconds;
  return [end] { return os::now_seconds() > end; };
}

// A fresh controller state directory with the clients' service on it (clock at 1000 s).
struct Service {
  TempDir dir;
  ctl::Settings config = test_config(dir / "state", write_cluster(dir));
  ctl::StateStore store{config.controller.state_dir};
  ctl::JobBook book;
  serve::ClientService service{config, store, book, [] { return 1000.0; }};
  Service() { store.create(); }
};

}  // namespace

TEST_CASE("a node gets the whole jobs that touch it, and their specs") {
  json p = two_job_placement();
  json t0 = serve::placement_for_node(p, "t4-0", 3);
  json t1 = serve::placement_for_node(p, "t4-1", 3);
  json t2 = serve::placement_for_node(p, "t4-2", 3);
  CHECK(t0["kind"] == "Placement");
  CHECK(t0["data"]["jobs"].size() == 2);
  REQUIRE(t1["data"]["jobs"].size() == 1);
  CHECK(t1["data"]["jobs"][0]["name"] == "b");
  CHECK(t1["data"]["jobs"][0]["nodes"].size() == 2);  // whole job: rank order kept
  CHECK(t2["data"]["jobs"].empty());                  // nothing: stop what it runs
  json jobs = {{"apiVersion", "sia/v1"},
               {"kind", "Jobs"},
               {"data", {{"jobs", {{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}}}}}};
  json j1 = serve::jobs_for_placement(jobs, t1["data"]);
  REQUIRE(j1["data"]["jobs"].size() == 1);
  CHECK(j1["data"]["jobs"][0]["name"] == "b");
}

TEST_CASE("report lines are journaled once, across restarts") {
  TempDir dir;
  ctl::StateStore store(dir / "state");
  store.create();
  ctl::JobBook book;
  store.commit(book, {ctl::make_submit("x", "test", 1, {spec("a")})});
  // Placed on t4-0 (a node speaks only for the jobs it ran).
  json placed = {{"name", "a"}, {"gpu_type", "t4"}, {"nodes", {{{"name", "t4-0"}, {"gpus", {0}}}}}};
  store.commit(book, {{{"type", "round"},
                       {"round", 1},
                       {"time", 50.0},
                       {"placement", {{"jobs", json::array({placed})}}}}});
  // Lines about a job not placed on t4-1, or unknown, are refused: never journaled, counted,
  // one warning per (node, job) naming both.
  std::vector<ctl::ReportLine> foreign = {{"t4-1", "a", 0, R"({"step":999999})", 0},
                                          {"t4-1", "a", 16, R"({"step":999999})", 0},
                                          {"t4-1", "zz", 0, R"({"step":9})", 0}};
  std::vector<std::string> warned;
  ctl::ForeignReports refused([&](const std::string& w) { warned.push_back(w); });
  CHECK(serve::journal_reports(store, book, foreign, 100, nullptr, refused) == 0);
  CHECK(serve::journal_reports(store, book, foreign, 101, nullptr, refused) == 0);
  CHECK(book.find("a")->step == 0);
  CHECK(book.report_next("t4-1", "a") == 0);
  CHECK(book.report_next("t4-1", "zz") == 0);
  CHECK(refused.refused() == 6);
  REQUIRE(warned.size() == 2);
  CHECK(warned[0].find("node t4-1: job a:") != std::string::npos);
  CHECK(warned[1].find("node t4-1: job zz:") != std::string::npos);
  CHECK(store.load(true, nullptr).report_offsets().empty());
  std::vector<ctl::ReportLine> lines = {{"t4-0", "a", 0, R"({"step":1})", 0},
                                        {"t4-0", "a", 11, R"({"step":2})", 0},
                                        {"t4-0", "a", 0, R"({"step":1})", 0}};
  CHECK(serve::journal_reports(store, book, lines, 100, nullptr, refused) == 2);
  CHECK(book.report_next("t4-0", "a") == 22);
  CHECK(serve::journal_reports(store, book, lines, 100, nullptr, refused) == 0);
  ctl::JobBook again = store.load(true, nullptr);
  CHECK(again.report_next("t4-0", "a") == 22);
  CHECK(serve::journal_reports(store, again, lines, 100, nullptr, refused) == 0);
}

TEST_CASE("the clients' service journals a submission before it answers") {
  TempDir dir;
  std::string cluster = write_cluster(dir);
  ctl::Settings config = test_config(dir / "state", cluster);
  ctl::StateStore store(config.controller.state_dir);
  store.create();
  ctl::JobBook book;
  serve::ClientService service(config, store, book, [] { return 1000.0; });

  channel::Request submit;
  submit.kind = channel::RequestKind::submit;
  submit.id = "r1";
  // A dry run (submit --dry-run through the channel): every check, nothing journaled.
  submit.args = {{"jobs", {job_spec_to_json(spec("a"))}}, {"dry_run", true}};
  CHECK(service.handle(alice(), submit).ok);
  CHECK(book.find("a") == nullptr);
  CHECK(store.load(false, nullptr).find("a") == nullptr);
  CHECK_FALSE(service.take_round_wanted());
  submit.args = {{"jobs", {job_spec_to_json(spec("a"))}}};
  channel::Reply r = service.handle(alice(), submit);
  CHECK(r.ok);
  CHECK(r.id == "r1");
  CHECK(r.document["kind"] == "JobStatusList");
  CHECK(service.take_round_wanted());  // nothing ran: a round at once
  CHECK_FALSE(service.take_round_wanted());

  // On disk already, with who submitted it.
  ctl::JobBook loaded = store.load(false, nullptr);
  REQUIRE(loaded.find("a") != nullptr);
  CHECK(loaded.find("a")->identity.find("client:alice") == 0);
  CHECK(loaded.find("a")->identity.find("KEY") != std::string::npos);

  // A name is never reused; nothing is written for a refused request.
  auto seq = book.seq();
  CHECK(sia::test::error_of([&] { service.handle(alice(), submit); }).first == 65);
  CHECK(book.seq() == seq);
  submit.args["dry_run"] = true;  // so is a dry run of it
  CHECK(sia::test::error_of([&] { service.handle(alice(), submit); }).second ==
        "job \"a\" exists already (queued); a job name is never reused: choose another");

  channel::Request cancel;
  cancel.kind = channel::RequestKind::cancel;
  cancel.args = {{"jobs", {"nosuch"}}};
  CHECK(sia::test::error_of([&] { service.handle(alice(), cancel); }).first == 66);
  cancel.args = {{"jobs", {"a"}}};
  // Owner-only: another client may neither cancel a nor see its details (77, nothing
  // journaled); its submitter may, whatever key it uses now.
  const channel::Identity bob{channel::Identity::Kind::client, "bob", "KEY2", true};
  seq = book.seq();
  auto [s77, m77] = sia::test::error_of([&] { service.handle(bob, cancel); });
  CHECK(s77 == 77);
  CHECK(m77.find("CANCEL: job \"a\" belongs to client:alice; client:bob may not act on it") == 0);
  channel::Request explain;
  explain.kind = channel::RequestKind::explain;
  explain.args = {{"job", "a"}};
  CHECK(sia::test::error_of([&] { service.handle(bob, explain); }).first == 77);
  CHECK(service.handle(alice(), explain).ok);
  CHECK(book.seq() == seq);
  channel::Identity alice2 = alice();
  alice2.key = "OTHERKEY";
  service.handle(alice2, cancel);
  CHECK(store.load(false, nullptr).find("a")->state == ctl::Lifecycle::cancelled);

  channel::Request status_req;
  status_req.kind = channel::RequestKind::status;
  CHECK(service.handle(alice(), status_req).document["data"]["jobs"].size() == 1);

  // A job still waiting as a file in the inbox (submitted locally) is cancelled through
  // the inbox, after its submission: the next round takes in both, in order.
  ctl::LocalBackend local(config, "local:bob");
  local.submit({spec("b")});
  cancel.args = {{"jobs", {"b"}}};
  CHECK(sia::test::error_of([&] { service.handle(alice(), cancel); }).first == 77);
  channel::Identity admin{channel::Identity::Kind::client, "root", "KEY3", true};
  admin.admin = true;  // an allow-list admin may act on every client's jobs
  service.handle(admin, cancel);
  std::vector<std::string> files = store.inbox_files();
  REQUIRE(files.size() == 2);
  CHECK(store.read_inbox(files[1])["type"] == "cancel");
  round_at(config, cluster, store, 1100);
  ctl::JobBook after = store.load(false, nullptr);
  REQUIRE(after.find("b") != nullptr);
  CHECK(after.find("b")->state == ctl::Lifecycle::cancelled);
  channel::Request nodes;
  nodes.kind = channel::RequestKind::nodes;
  CHECK(service.handle(alice(), nodes).document["kind"] == "NodeList");
  // The agents connected now are listed, also one no round has seen yet.
  service.set_live_nodes([] {
    return json::array({{{"name", "late-0"},
                         {"state", "up"},
                         {"gpu_type", "t4"},
                         {"gpus", 2},
                         {"address", nullptr},
                         {"last_seen", 1200.0}}});
  });
  json listed = service.handle(alice(), nodes).document["data"]["nodes"];
  auto late = std::find_if(listed.begin(), listed.end(),
                           [](const json& n) { return n["name"] == "late-0"; });
  REQUIRE(late != listed.end());
  CHECK((*late)["state"] == "up");
  CHECK((*late)["gpus"] == 2);
  CHECK((*late)["address"] == "late-0");

  // hold, release and requeue take the same path as cancel; HISTORY answers.
  channel::Request hold;
  hold.kind = channel::RequestKind::hold;
  hold.args = {{"jobs", {"a"}}};
  CHECK(sia::test::error_of([&] { service.handle(alice(), hold); }).first == 65);  // ended
  channel::Request history;
  history.kind = channel::RequestKind::history;
  CHECK(service.handle(alice(), history).document["kind"] == "JobHistory");
}

TEST_CASE("the clients' service records whom a client's jobs run as") {
  Service f;
  serve::ClientService& service = f.service;
  channel::Request submit;
  submit.kind = channel::RequestKind::submit;
  channel::Identity carol{channel::Identity::Kind::client, "carol", "KEY4", true};
  carol.account = "carol_acct";  // the allow-list's user
  submit.args = {{"jobs", {job_spec_to_json(spec("c"))}}};
  service.handle(carol, submit);
  submit.args = {{"jobs", {job_spec_to_json(spec("b"))}}};
  service.handle(channel::Identity{channel::Identity::Kind::client, "bob", "KEY2", true}, submit);
  submit.args = {{"jobs", {job_spec_to_json(spec("i"))}}};
  service.handle(channel::Identity{channel::Identity::Kind::client, "me", "", false}, submit);
  ctl::JobBook loaded = f.store.load(false, nullptr);
  CHECK(*loaded.find("c")->run_as == RunAs{"carol_acct", "client:carol", false});
  CHECK(*loaded.find("b")->run_as == RunAs{"", "client:bob", false});  // a root node refuses it
  CHECK(*loaded.find("i")->run_as == RunAs{"", "client:me", true});    // ipc://: an admin
  channel::Request status;
  status.kind = channel::RequestKind::status;
  status.args = {{"jobs", {"c"}}};
  CHECK(service.handle(carol, status).document["data"]["jobs"][0]["run_as"] == "carol_acct");
}

TEST_CASE("the clients' service takes an app with its trials and cancels it by name") {
  Service f;
  serve::ClientService& service = f.service;
  ctl::StateStore& store = f.store;
  AppSpec app = lr_app("s", AppSchedulerKind::successive_halving, {0.1, 0.01});
  ctl::Submission sub{expand_trials(app, "test"), {app}};
  channel::Request submit;
  submit.kind = channel::RequestKind::submit;
  submit.args = ctl::submission_body(sub);
  service.handle(alice(), submit);
  ctl::JobBook loaded = store.load(false, nullptr);
  REQUIRE(loaded.find_app("s") != nullptr);
  CHECK(loaded.find_app("s")->trials == std::vector<std::string>{"s-000", "s-001"});
  CHECK(loaded.find("s-001")->spec.hparams.at("lr") == 0.01);
  // Trials without their app are refused, as is the app's name for a job.
  submit.args = ctl::submission_body({{spec("x")}, {}});
  submit.args["jobs"][0]["app"] = "t";
  CHECK(sia::test::error_of([&] { service.handle(alice(), submit); }).first == 65);
  submit.args = ctl::submission_body({{spec("s")}, {}});
  CHECK(sia::test::error_of([&] { service.handle(alice(), submit); }).first == 65);
  channel::Request cancel;
  cancel.kind = channel::RequestKind::cancel;
  cancel.args = {{"jobs", {"s"}}};
  // Owner-only by the app's name as by a trial's.
  const channel::Identity bob{channel::Identity::Kind::client, "bob", "KEY2", true};
  CHECK(sia::test::error_of([&] { service.handle(bob, cancel); }).first == 77);
  CHECK(loaded.find("s-000")->state != ctl::Lifecycle::cancelled);
  service.handle(alice(), cancel);
  loaded = store.load(false, nullptr);
  CHECK(loaded.find("s-000")->state == ctl::Lifecycle::cancelled);
  CHECK(loaded.find("s-001")->state == ctl::Lifecycle::cancelled);
}

TEST_CASE("the clients' service names an app still in the inbox: status and cancel") {
  TempDir dir;
  const std::string cluster = write_cluster(dir);
  ctl::Settings config = test_config(dir / "state", cluster);
  ctl::StateStore store(config.controller.state_dir);
  store.create();
  ctl::JobBook book;
  serve::ClientService service(config, store, book, [] { return 1000.0; });
  AppSpec app = lr_app("p", AppSchedulerKind::hyperband, {0.1, 0.01, 0.001});
  ctl::LocalBackend local(config, "local:bob");  // submitted locally: a file in the inbox
  local.submit({expand_trials(app, "test"), {app}});
  channel::Request status;
  status.kind = channel::RequestKind::status;
  status.args = {{"jobs", {"p"}}};
  json d = service.handle(alice(), status).document["data"];
  REQUIRE(d["apps"].size() == 1);
  CHECK(d["apps"][0]["state"] == "submitted");
  CHECK(d["apps"][0]["scheduler"] == "hyperband");
  CHECK(d["apps"][0]["live"] == 3);
  CHECK(d["apps"][0]["brackets"].size() == 2);
  REQUIRE(d["jobs"].size() == 3);
  CHECK(d["jobs"][0]["name"] == "p-000");
  CHECK(d["jobs"][0]["state"] == "submitted");
  status.args = json::object();  // every app, the waiting one too
  CHECK(service.handle(alice(), status).document["data"]["apps"].size() == 1);
  // A second submission of the same app while the first waits is refused, by the local
  // client and by the daemon alike (one check, one message), also when its trials have new
  // names: the app's own name is taken.
  CHECK(sia::test::error_of([&] {
          local.submit({expand_trials(app, "test"), {app}});
        }).first == 65);
  JobSpec renamed = spec("q");
  renamed.app = "p";
  const ctl::Submission again{{renamed}, {app}};
  channel::Request submit;
  submit.kind = channel::RequestKind::submit;
  submit.args = ctl::submission_body(again);
  const auto by_local = sia::test::error_of([&] { local.submit(again); });
  const auto by_daemon = sia::test::error_of([&] { service.handle(alice(), submit); });
  CHECK(by_local.first == 65);
  CHECK(by_local.second == "\"p\" is submitted already (waiting in the inbox)");
  CHECK(by_daemon == by_local);
  CHECK(book.find("q") == nullptr);  // nothing journaled
  // Cancel by the app's name: owner-only; the owner's goes into the inbox after it.
  channel::Request cancel;
  cancel.kind = channel::RequestKind::cancel;
  cancel.args = {{"jobs", {"p"}}};
  CHECK(sia::test::error_of([&] { service.handle(alice(), cancel); }).first == 77);
  const channel::Identity bob{channel::Identity::Kind::client, "bob", "KEY2", true};
  CHECK(sia::test::error_of([&] { service.handle(bob, cancel); }).first == 77);  // local:bob
  channel::Identity admin{channel::Identity::Kind::client, "root", "KEY3", true};
  admin.admin = true;
  service.handle(admin, cancel);
  std::vector<std::string> files = store.inbox_files();
  REQUIRE(files.size() == 2);
  CHECK(store.read_inbox(files[1])["type"] == "cancel");
  CHECK(round_at(config, cluster, store, 1100).empty());  // nothing placed
  ctl::JobBook after = store.load(false, nullptr);
  for (const char* t : {"p-000", "p-001", "p-002"}) {
    REQUIRE(after.find(t) != nullptr);
    CHECK(after.find(t)->state == ctl::Lifecycle::cancelled);
  }
}

TEST_CASE("the hub driver delivers, waits for ACKs and observes through the hub") {
  TempDir dir;
  Cluster cluster = read_cluster(write_cluster(dir));
  channel::HubOptions ho = fast_hub(dir, 25);
  ho.fence_after = 30;
  channel::Hub hub(ho, nullptr);
  std::vector<ctl::ReportLine> journaled;
  StepClock clock;
  serve::HubDriverOptions opt;
  opt.clock = &clock;
  opt.interrupted = give_up_after(60);
  opt.ack_timeout = 5;
  opt.on_reports = [&](std::vector<ctl::ReportLine> l) {
    journaled.insert(journaled.end(), l.begin(), l.end());
  };
  serve::HubDriver driver(hub, cluster, opt);

  zmq::context_t ctx;
  zmq::socket_t agent(ctx, zmq::socket_type::dealer);
  agent.set(zmq::sockopt::linger, 0);
  agent.connect(hub.endpoint());
  auto send = [&](const channel::Message& m) {
    agent.send(zmq::buffer(channel::encode(m)), zmq::send_flags::none);
  };
  channel::Ready ready;
  ready.node = "t4-0";
  ready.inventory = {"t4", 2, "t4-0"};
  ready.run_status = {{"node", "t4-0"}, {"jobs", {{{"name", "a"}, {"state", "running"}}}}};
  send(ready);
  for (int i = 0; i < 600 && driver.nodes_up().empty(); ++i) {
    driver.pump(std::chrono::milliseconds(50));
  }
  REQUIRE(driver.nodes_up() == std::vector<std::string>{"t4-0"});

  // Reports go to on_reports as they arrive.
  channel::Report rep;
  rep.node = "t4-0";
  rep.lines = {{"a", 0, R"({"step":1})"}};
  send(rep);
  for (int i = 0; i < 600 && journaled.empty(); ++i) driver.pump(std::chrono::milliseconds(50));
  REQUIRE(journaled.size() == 1);
  CHECK(journaled[0].node == "t4-0");
  CHECK(driver.drain_reports().empty());

  // The agent answers every ASSIGN from a thread.
  std::atomic<bool> got_assign{false};
  std::thread answer([&] {
    zmq::message_t m;
    for (int i = 0; i < 3000; ++i) {
      if (!agent.recv(m, zmq::recv_flags::dontwait)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      channel::Message msg;
      try {
        msg = channel::decode(std::string_view(static_cast<const char*>(m.data()), m.size()));
      } catch (const Error&) {
        continue;
      }
      if (auto* a = std::get_if<channel::Assign>(&msg)) {
        got_assign = a->placement["data"]["jobs"].size() == 2;
        channel::Ack ack;
        ack.round = a->round;
        ack.seq = a->seq;
        ack.plan = {{"actions", {{{"job", "a"}, {"action", "keep"}, {"round", 1}}}}};
        ack.run_status = {{"node", "t4-0"},
                          {"jobs", {{{"name", "a"}, {"state", "running"}, {"round", 1}}}}};
        send(ack);
        return;
      }
    }
  });
  std::vector<ctl::NodeResult> results;
  try {
    Placement p = parse_placement(Node(two_job_placement(), "test", ""), cluster);
    results = driver.deliver(7, p, {{"data", {{"jobs", json::array()}}}});
  } catch (...) {
    answer.join();
    throw;
  }
  answer.join();
  CHECK(got_assign);
  REQUIRE(results.size() == 2);
  CHECK(results[0].node == "t4-0");
  CHECK(results[0].acknowledged);
  CHECK(results[0].plan["actions"].size() == 1);
  CHECK_FALSE(results[1].acknowledged);  // no agent for t4-1
  CHECK(results[1].error.find("no agent") != std::string::npos);

  // A heartbeat saying the job finished is seen at once.
  channel::Heartbeat hb;
  hb.node = "t4-0";
  hb.jobs = {{"a", "finished"}};
  send(hb);
  std::string state;
  for (int i = 0; i < 600 && state != "finished"; ++i) {
    driver.pump(std::chrono::milliseconds(50));
    for (const auto& s : driver.observe()) {
      if (s.node == "t4-0" && s.ok) state = s.status["jobs"][0].value("state", "");
    }
  }
  CHECK(state == "finished");
}

namespace {

// A DEALER agent on its own thread: says READY with `jobs` running, then ACKs every
// ASSIGN at once, recording the jobs each ASSIGN named.
class FakeAgent {
 public:
  FakeAgent(zmq::context_t& ctx, const std::string& endpoint, std::string node,
            std::vector<std::string> running)
      : socket_(ctx, zmq::socket_type::dealer), node_(std::move(node)) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(endpoint);
    channel::Ready r;
    r.node = node_;
    r.inventory = {"t4", 2, node_};
    json jobs = json::array();
    for (const auto& j : running) jobs.push_back({{"name", j}, {"state", "running"}});
    r.run_status = {{"node", node_}, {"jobs", jobs}};
    send(r);
    thread_ = std::thread([this] { loop(); });
  }
  ~FakeAgent() {
    stop_ = true;
    thread_.join();
  }
  std::vector<std::vector<std::string>> assigns() {
    std::lock_guard<std::mutex> g(mu_);
    return assigns_;
  }
  // Muted, it takes ASSIGNs but acknowledges none (an apply that takes long).
  void mute(bool m) { mute_ = m; }

 private:
  void send(const channel::Message& m) {
    socket_.send(zmq::buffer(channel::encode(m)), zmq::send_flags::none);
  }
  void loop() {
    while (!stop_) {
      zmq::message_t m;
      if (!socket_.recv(m, zmq::recv_flags::dontwait)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      channel::Message msg;
      try {
        msg = channel::decode(std::string_view(static_cast<const char*>(m.data()), m.size()));
      } catch (const Error&) {
        continue;
      }
      auto* a = std::get_if<channel::Assign>(&msg);
      if (!a) continue;
      std::vector<std::string> names;
      json jobs = json::array();
      for (const auto& j : a->placement["data"]["jobs"]) {
        names.push_back(j.value("name", ""));
        jobs.push_back({{"name", j.value("name", "")}, {"state", "running"}});
      }
      {
        std::lock_guard<std::mutex> g(mu_);
        assigns_.push_back(names);
      }
      if (mute_) continue;
      channel::Ack ack;
      ack.round = a->round;
      ack.seq = a->seq;
      ack.plan = {{"actions", json::array()}};
      ack.run_status = {{"node", node_}, {"jobs", jobs}};
      send(ack);
    }
  }

  zmq::socket_t socket_;
  std::string node_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> mute_{false};
  std::mutex mu_;
  std::vector<std::vector<std::string>> assigns_;
  std::thread thread_;
};

// A hub driver over the test cluster and fake agents on t4-0 and t4-1 that run the jobs
// given, both up. `liveness`: the hub's heartbeat liveness (fast_hub); `ack_timeout`: the
// driver's wait for ACKs, read on `clock`.
struct TwoAgents {
  TwoAgents(int liveness, double ack_timeout, std::vector<std::string> on_t0,
            std::vector<std::string> on_t1)
      : cluster(read_cluster(write_cluster(dir))),
        hub(fast_hub(dir, liveness), nullptr),
        driver(hub, cluster, options(clock, ack_timeout)),
        t0(ctx, hub.endpoint(), "t4-0", std::move(on_t0)),
        t1(ctx, hub.endpoint(), "t4-1", std::move(on_t1)) {
    for (int i = 0; i < 600 && driver.nodes_up().size() < 2; ++i) {
      driver.pump(std::chrono::milliseconds(50));
    }
    REQUIRE(driver.nodes_up().size() == 2);
  }
  static serve::HubDriverOptions options(StepClock& clock, double ack_timeout) {
    serve::HubDriverOptions opt;
    opt.clock = &clock;
    opt.interrupted = give_up_after(60);
    opt.ack_timeout = ack_timeout;
    return opt;
  }

  TempDir dir;
  Cluster cluster;
  channel::Hub hub;
  StepClock clock;
  serve::HubDriver driver;
  zmq::context_t ctx;
  FakeAgent t0;
  FakeAgent t1;
};

}  // namespace

TEST_CASE("a moved job starts on its new node only after its old node acknowledged") {
  TwoAgents bed(25, 5, {"a"}, {});  // a runs on t4-0
  Cluster& cluster = bed.cluster;
  serve::HubDriver& driver = bed.driver;
  FakeAgent &t0 = bed.t0, &t1 = bed.t1;
  // a moves to t4-1; b is new there.
  json moved = {
      {"cluster_name", "box"},
      {"jobs",
       {{{"name", "a"}, {"gpu_type", "t4"}, {"nodes", {{{"name", "t4-1"}, {"gpus", {0}}}}}},
        {{"name", "b"}, {"gpu_type", "t4"}, {"nodes", {{{"name", "t4-1"}, {"gpus", {1}}}}}}}},
      {"evicted", json::array()},
      {"waiting", json::array()}};
  Placement p = parse_placement(Node(moved, "test", ""), cluster);
  auto results = driver.deliver(3, p, {{"data", {{"jobs", json::array()}}}});
  REQUIRE(results.size() == 2);
  CHECK(results[0].acknowledged);
  CHECK(results[1].acknowledged);
  auto a0 = t0.assigns();
  auto a1 = t1.assigns();
  REQUIRE(a0.size() == 1);
  CHECK(a0[0].empty());  // t4-0 stops a
  REQUIRE(a1.size() == 2);
  CHECK(a1[0] == std::vector<std::string>{"b"});       // phase 1: not a yet
  CHECK(a1[1] == std::vector<std::string>{"a", "b"});  // phase 2: a, after t4-0's ACK
}

TEST_CASE("a job sent to a node that has not acknowledged it starts nowhere else") {
  TwoAgents bed(100, 0.5, {}, {});
  Cluster& cluster = bed.cluster;
  StepClock& clock = bed.clock;
  serve::HubDriver& driver = bed.driver;
  FakeAgent &t0 = bed.t0, &t1 = bed.t1;
  auto on = [&](const std::string& node) {
    json data = {
        {"cluster_name", "box"},
        {"jobs",
         {{{"name", "a"}, {"gpu_type", "t4"}, {"nodes", {{{"name", node}, {"gpus", {0}}}}}}}},
        {"evicted", json::array()},
        {"waiting", json::array()}};
    return parse_placement(Node(data, "test", ""), cluster);
  };
  const json jobs = {{"data", {{"jobs", json::array()}}}};
  auto has_a = [](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), "a") != names.end();
  };
  // Round 3 places a on t4-0, whose apply takes longer than the round waits.
  t0.mute(true);
  clock.step = os::span(0.05);  // the 0.5 s wait passes in ten readings
  auto r3 = driver.deliver(3, on("t4-0"), jobs);
  CHECK_FALSE(r3[0].acknowledged);
  // Round 4 moves it to t4-1; t4-0 may still be starting it, so t4-1 does not get it.
  auto r4 = driver.deliver(4, on("t4-1"), jobs);
  CHECK_FALSE(r4[0].acknowledged);
  for (const auto& names : t1.assigns()) CHECK_FALSE(has_a(names));
  // Once t4-0 acknowledges its latest ASSIGN (without a), a starts on t4-1.
  t0.mute(false);
  clock.step = {};  // waits for the ACKs
  auto r5 = driver.deliver(5, on("t4-1"), jobs);
  CHECK(r5[0].acknowledged);
  REQUIRE_FALSE(t1.assigns().empty());
  CHECK(has_a(t1.assigns().back()));
}

TEST_CASE("after a restart the last placement's nodes hold their jobs until fenced") {
  TempDir dir;
  Cluster cluster = read_cluster(write_cluster(dir));
  channel::HubOptions ho;
  ho.bind = "ipc://" + (dir / "hub.sock");
  ho.log = [](const std::string&) {};
  channel::Hub hub(ho, nullptr);
  hub.confirm_reports("t4-1", {{"a", 100}});  // known from the journal only
  StepClock clock;
  serve::HubDriverOptions opt;
  opt.clock = &clock;
  opt.hold = {{"t4-1", 0.3}};
  std::vector<std::string> logs;
  opt.log = [&](const std::string& l) { logs.push_back(l); };
  serve::HubDriver driver(hub, cluster, opt);
  CHECK(driver.nodes_up() == std::vector<std::string>{"t4-1"});
  auto st = driver.observe();
  REQUIRE(st.size() == 2);
  CHECK_FALSE(st[1].ok);
  CHECK(st[1].error.find("has not come back") != std::string::npos);
  clock.advance(0.29);
  CHECK(driver.nodes_up() == std::vector<std::string>{"t4-1"});
  CHECK(logs.empty());
  clock.advance(0.02);
  CHECK(driver.nodes_up().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].find("t4-1 did not come back") == 0);
}

TEST_CASE("a controller restarted while a node is silent holds it for its agent's lease") {
  // The node's agent runs with a long --grace (600 s): its READY's lease is remembered in
  // the state directory, and the next controller holds the node for that lease, not for
  // the assumed one (which would let its jobs start elsewhere while they still stop).
  TempDir dir;
  Cluster cluster = read_cluster(write_cluster(dir));
  const std::string file = dir / "leases.json";
  const channel::Lease long_grace = channel::agent_lease(30, 600);
  {
    channel::LeaseMemory leases(file, [](const std::string& w) { FAIL(w); });
    channel::Hub hub(fast_hub(dir, 3), nullptr);
    serve::HubDriverOptions opt;
    opt.leases = &leases;
    serve::HubDriver driver(hub, cluster, opt);
    zmq::context_t ctx;
    zmq::socket_t agent(ctx, zmq::socket_type::dealer);
    agent.set(zmq::sockopt::linger, 0);
    agent.connect(hub.endpoint());
    channel::Ready ready;
    ready.node = "t4-1";
    ready.inventory = {"t4", 2, "t4-1"};
    ready.lease = long_grace;
    agent.send(zmq::buffer(channel::encode(ready)), zmq::send_flags::none);
    for (int i = 0; i < 600 && driver.nodes_up().empty(); ++i) {
      driver.pump(std::chrono::milliseconds(50));
    }
    REQUIRE(driver.nodes_up() == std::vector<std::string>{"t4-1"});
  }  // the controller stops; the node goes silent
  std::vector<std::string> warnings;
  channel::LeaseMemory leases(file, [&](const std::string& w) { warnings.push_back(w); });
  CHECK(warnings.empty());
  channel::HubOptions ho = fast_hub(dir, 3);
  ho.bind = "ipc://" + (dir / "hub2.sock");
  ho.fence_after = 30;
  ho.remembered = leases.leases();
  channel::Hub hub(ho, nullptr);
  hub.confirm_reports("t4-1", {{"a", 100}});  // known from the journal
  StepClock clock;
  serve::HubDriverOptions opt;
  opt.clock = &clock;
  opt.hold = serve::restart_hold({"t4-1"}, ho);
  std::vector<std::string> logs;
  opt.log = [&](const std::string& l) { logs.push_back(l); };
  serve::HubDriver driver(hub, cluster, opt);
  const double assumed = 0.2 * 4 + 30 + 30;       // the assumed lease: 60.8 s
  const double remembered = 0.2 * 4 + 610 + 610;  // its own: 1220.8 s
  CHECK(opt.hold.at("t4-1") == Approx(remembered));
  CHECK(hub.agent("t4-1")->fence_limit == Approx(remembered));
  clock.advance(assumed + 1);
  CHECK(driver.nodes_up() == std::vector<std::string>{"t4-1"});  // still holds its jobs
  clock.advance(remembered - assumed - 1.1);
  CHECK(driver.nodes_up() == std::vector<std::string>{"t4-1"});
  CHECK(logs.empty());
  clock.advance(0.2);
  CHECK(driver.nodes_up().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0] ==
        "t4-1 did not come back within 1220.8 s of the controller's start: it is "
        "fenced, its jobs count as stopped");
}

TEST_CASE("a node's word counts only for the jobs it was sent") {
  // With `given`, the journal says an earlier controller placed a on t4-1: a may have
  // finished there since, and that word must count (else a stays running forever).
  const bool given = GENERATE(false, true);
  CAPTURE(given);
  TempDir dir;
  Cluster cluster = read_cluster(write_cluster(dir));
  channel::HubOptions ho = fast_hub(dir, 25);
  ho.fence_after = 30;
  channel::Hub hub(ho, nullptr);
  StepClock clock;
  clock.step = os::span(0.05);  // the unacknowledged ASSIGN's 0.5 s wait: ten readings
  serve::HubDriverOptions opt;
  opt.clock = &clock;
  opt.ack_timeout = 0.5;
  if (given) opt.given = {{"t4-1", {"a"}}};
  serve::HubDriver driver(hub, cluster, opt);
  zmq::context_t ctx;
  zmq::socket_t agent(ctx, zmq::socket_type::dealer);
  agent.set(zmq::sockopt::linger, 0);
  agent.connect(hub.endpoint());
  auto send = [&](const channel::Message& m) {
    agent.send(zmq::buffer(channel::encode(m)), zmq::send_flags::none);
  };
  auto jobs_of_t41 = [&] {
    std::set<std::string> out;
    for (const auto& s : driver.observe()) {
      if (s.node != "t4-1") continue;
      for (const auto& j : s.status.value("jobs", json::array())) out.insert(j.value("name", ""));
    }
    return out;
  };
  channel::Ready ready;
  ready.node = "t4-1";
  ready.inventory = {"t4", 2, "t4-1"};
  ready.run_status = {{"node", "t4-1"}, {"jobs", {{{"name", "a"}, {"state", "running"}}}}};
  send(ready);
  for (int i = 0; i < 600 && driver.nodes_up().empty(); ++i) {
    driver.pump(std::chrono::milliseconds(50));
  }
  REQUIRE(driver.nodes_up() == std::vector<std::string>{"t4-1"});
  // Before any ASSIGN (a restarted controller), its word stands.
  CHECK(jobs_of_t41() == std::set<std::string>{"a"});
  // It is sent b only (a goes to t4-0); it does not acknowledge, and says a finished.
  Placement p = parse_placement(Node(two_job_placement(), "test", ""), cluster);
  driver.deliver(1, p, {{"data", {{"jobs", json::array()}}}});
  channel::Heartbeat hb;
  hb.node = "t4-1";
  hb.jobs = {{"a", "finished"}, {"b", "running"}};
  send(hb);
  std::set<std::string> seen;
  for (int i = 0; i < 600 && !seen.count("b"); ++i) {
    driver.pump(std::chrono::milliseconds(50));
    seen = jobs_of_t41();
  }
  CHECK(seen == (given ? std::set<std::string>{"a", "b"} : std::set<std::string>{"b"}));
}

TEST_CASE("a job restarted across its nodes stops on all of them before it starts on any") {
  TwoAgents bed(25, 5, {"a"}, {"a"});  // a runs on both nodes
  Cluster& cluster = bed.cluster;
  serve::HubDriver& driver = bed.driver;
  FakeAgent &t0 = bed.t0, &t1 = bed.t1;
  auto placed = [&](std::vector<std::string> nodes, std::vector<int> gpus, bool restart) {
    json ns = json::array();
    for (const auto& n : nodes) ns.push_back({{"name", n}, {"gpus", gpus}});
    json data = {
        {"cluster_name", "box"},
        {"jobs", {{{"name", "a"}, {"gpu_type", "t4"}, {"nodes", ns}, {"restart", restart}}}},
        {"evicted", json::array()},
        {"waiting", json::array()}};
    return parse_placement(Node(data, "test", ""), cluster);
  };
  const json jobs = {{"data", {{"jobs", json::array()}}}};
  using Names = std::vector<std::string>;
  const Names none, a{"a"};

  // Kept on its nodes (a batch size at most): one phase, a stays on both.
  auto r1 = driver.deliver(3, placed({"t4-0", "t4-1"}, {0}, false), jobs);
  CHECK((r1[0].acknowledged && r1[1].acknowledged));
  CHECK(t0.assigns() == std::vector<Names>{a});
  CHECK(t1.assigns() == std::vector<Names>{a});

  // A new shape on the same two nodes: both stop it, then both start it.
  auto r2 = driver.deliver(4, placed({"t4-0", "t4-1"}, {0, 1}, true), jobs);
  CHECK((r2[0].acknowledged && r2[1].acknowledged));
  CHECK(t0.assigns() == std::vector<Names>{a, none, a});
  CHECK(t1.assigns() == std::vector<Names>{a, none, a});

  // Shrunk onto t4-0, which runs it: t4-0 starts it only after t4-1 stopped it too.
  auto r3 = driver.deliver(5, placed({"t4-0"}, {0, 1}, true), jobs);
  CHECK((r3[0].acknowledged && r3[1].acknowledged));
  CHECK(t0.assigns() == std::vector<Names>{a, none, a, none, a});
  CHECK(t1.assigns() == std::vector<Names>{a, none, a, none});
}
