#include <catch2/catch.hpp>

#include <algorithm>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "ctl/client_backend.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/history.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/state_store.hpp"
#include "ctl/submission.hpp"
#include "ctl_test_util.hpp"
#include "model/shared_profiles.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
namespace ct = sia::ctl::test;
namespace fs = std::filesystem;
using Fixture = ct::RoundFixture;

namespace {

int run_shell(const std::string& cmd, std::string* out) {
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out->append(buf, n);
  int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST_CASE("submitted jobs run, report and finish exactly once", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  json reply = client.submit({ct::spec("a"), ct::spec("b")});
  CHECK(reply["data"]["jobs"][0]["state"] == "submitted");
  CHECK(f.store.inbox_files().size() == 1);
  // A name already waiting in the inbox is refused before anything is written.
  CHECK(sia::test::error_of([&] { client.submit({ct::spec("a")}); }).first == 65);

  json r1 = f.round();
  CHECK(r1["submitted"] == json::array({"a", "b"}));
  CHECK(f.store.inbox_files().empty());
  REQUIRE(f.driver.deliveries.size() == 1);
  CHECK(f.placed_in(0) == std::set<std::string>{"a", "b"});
  JobBook b1 = f.book();
  CHECK(b1.find("a")->state == Lifecycle::running);
  CHECK(b1.find("a")->starts == 1);
  CHECK(b1.find("a")->identity == "local:tester");
  CHECK(fs::exists(f.store.round_file(1, "placement")));
  CHECK(fs::exists(f.store.round_file(1, "goodput")));

  // Reports arrive; the same line twice is taken once.
  std::string na = f.node_of("a");
  json rep = {{"step", 5},         {"progress", 4.0},  {"step_time", 0.1},
              {"sync_time", 0.01}, {"local_bsz", 16},  {"world_size", 1},
              {"nodes", 1},        {"gpu_type", "t4"}, {"reason", "interval"}};
  CHECK(!fs::exists(f.store.path("profiles.json")));  // nothing measured yet
  f.driver.report(na, "a", 0, rep);
  f.driver.report(na, "a", 0, rep);
  f.round();
  // The profile store learnt a's measurement for its model; the next round starts from it
  // (and keeps it among the round's documents).
  {
    const auto store = read_shared_profiles(f.store.path("profiles.json"));
    REQUIRE(store.size() == 1);
    CHECK(store[0].model == "cifar10");
    REQUIRE(store[0].points.size() == 1);
    CHECK(store[0].points[0].gpu_type == "t4");
    CHECK(store[0].points[0].local_bsz == 16);
    f.round();
    CHECK(read_shared_profiles(f.store.round_file(3, "profiles")).size() == 1);
  }
  // A report of the current start ends the restore, unless that round moved the job.
  if (f.node_of("a") == na) CHECK(!f.book().find("a")->restoring);
  f.driver.report(na, "a", 0, rep);  // and again in a later round
  f.round();
  CHECK(f.book().find("a")->reports == 1);

  // a's workers finish: it ends once and is never handed out again.
  for (auto& [node, runs] : f.driver.runs) {
    if (runs.count("a") && runs["a"].state == "running") runs["a"].state = "finished";
  }
  json r4 = f.round();
  CHECK(r4["ended"].size() == 1);
  CHECK(r4["ended"][0]["job"] == "a");
  std::size_t n = f.driver.deliveries.size();
  CHECK(f.placed_in(n - 1) == std::set<std::string>{"b"});
  json r5 = f.round();
  CHECK(r5["ended"].empty());
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"b"});
  JobBook b5 = f.book();
  CHECK(b5.find("a")->state == Lifecycle::finished);
  CHECK(b5.find("a")->exit_status == 0);
  // A finished name cannot be submitted again.
  auto e = sia::test::error_of([&] { client.submit({ct::spec("a")}); });
  CHECK(e.first == 65);
  CHECK(e.second.find("exists already (finished)") != std::string::npos);

  // Status, nodes and explain documents.
  json st = client.status({});
  CHECK(st["kind"] == "JobStatusList");
  CHECK(st["data"]["jobs"].size() == 2);
  json ex = client.explain("b");
  CHECK(ex["data"]["state"] == "running");
  CHECK(!ex["data"]["lines"].empty());
  CHECK(client.nodes()["data"]["nodes"].size() == 2);
  CHECK(sia::test::error_of([&] { client.status({"nope"}); }).first == 66);
}

TEST_CASE("a job that reported done keeps its GPUs while it ends", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  std::string na = f.node_of("a");
  auto before = f.driver.deliveries.back().second.find("a")->nodes;
  int gen = f.driver.runs[na]["a"].generation;
  f.driver.report(na, "a", 0, {{"step", 9}, {"round", gen}, {"reason", "done"}});
  client.submit({ct::spec("b")});  // wants GPUs too: it does not get a's
  json r = f.round();
  CHECK(r["finishing"] == json::array({"a"}));
  // Placed exactly as before, so its node lets it exit by itself (no stop, no restart).
  const auto* a = f.driver.deliveries.back().second.find("a");
  REQUIRE(a);
  CHECK(a->nodes.size() == before.size());
  CHECK(a->nodes.front().node == before.front().node);
  CHECK(a->nodes.front().gpus == before.front().gpus);
  CHECK(f.book().find("a")->state != Lifecycle::finished);
}

TEST_CASE("cancel stops a job at the next round", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  CHECK(sia::test::error_of([&] { client.request(JobRequest::cancel, {"zz"}); }).first == 66);
  json c = client.request(JobRequest::cancel, {"a"});
  CHECK(c["data"]["jobs"][0]["reason"].get<std::string>().find("cancel requested") == 0);
  json r = f.round();
  CHECK(r["cancelled"] == json::array({"a"}));
  CHECK(f.book().find("a")->state == Lifecycle::cancelled);
  CHECK(f.placed_in(f.driver.deliveries.size() - 1).empty());
}

TEST_CASE("hold, release and requeue are journaled and acted on by the next round", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a"), ct::spec("b")});
  f.round();
  REQUIRE(f.placed_in(0) == std::set<std::string>{"a", "b"});

  // hold: the next round stops a and keeps it out until it is released.
  json h = client.request(JobRequest::hold, {"a"});
  CHECK(h["data"]["jobs"][0]["reason_code"] == "request");
  json r = f.round();
  CHECK(r["held"] == json::array({"a"}));
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"b"});
  JobBook b1 = f.book();
  CHECK(b1.find("a")->held_by == "local:tester");
  CHECK(b1.find("a")->state == Lifecycle::queued);
  json st = client.status({"a"});
  CHECK(st["data"]["jobs"][0]["reason_code"] == "held");
  CHECK(st["data"]["jobs"][0]["held_by"] == "local:tester");
  f.round();
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"b"});
  client.request(JobRequest::release, {"a"});
  r = f.round();
  CHECK(r["released"] == json::array({"a"}));
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"a", "b"});
  CHECK(f.book().find("a")->held_by.empty());

  // requeue: out for exactly one round, then scheduled like any other.
  client.request(JobRequest::requeue, {"b"});
  r = f.round();
  CHECK(r["requeued"] == json::array({"b"}));
  CHECK(r["left_out"] == json::array({"b"}));
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"a"});
  CHECK(f.book().find("b")->requeue_by.empty());
  f.round();
  CHECK(f.placed_in(f.driver.deliveries.size() - 1) == std::set<std::string>{"a", "b"});
  CHECK(f.book().find("b")->starts == 2);

  // An ended job cannot be held, released or requeued (65); nothing is written.
  client.request(JobRequest::cancel, {"b"});
  f.round();
  for (auto req : {JobRequest::hold, JobRequest::release, JobRequest::requeue}) {
    auto e = sia::test::error_of([&] { client.request(req, {"a", "b"}); });
    CHECK(e.first == 65);
    CHECK(e.second.find("job \"b\" has ended (cancelled)") != std::string::npos);
  }
  CHECK(f.store.inbox_files().empty());
  CHECK(sia::test::error_of([&] { client.request(JobRequest::hold, {"zz"}); }).first == 66);
}

TEST_CASE("history accounts GPU time per type and forgets old ended jobs", "[round]") {
  Fixture f(std::map<std::string, std::string>{{"controller.history_days", "1"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  const double submitted = f.now;
  f.round();  // placed at `submitted` (the round's time)
  f.round();
  f.round();  // 120 s later
  for (auto& [node, runs] : f.driver.runs) {
    if (runs.count("a")) runs["a"].state = "finished";
  }
  f.round();  // ends at submitted + 180
  json h = client.history();
  CHECK(h["kind"] == "JobHistory");
  REQUIRE(h["data"]["jobs"].size() == 1);
  const json& row = h["data"]["jobs"][0];
  CHECK(row["state"] == "finished");
  CHECK(row["user"] == "tester");
  CHECK(row["started"].get<double>() >= submitted);
  CHECK(row["ended"] == submitted + 180);
  const JobBook b = f.book();
  const int gpus = b.find("a")->history.front().placed->gpus();
  CHECK(row["run_time"].get<double>() == Approx(180 - (row["started"].get<double>() - submitted)));
  CHECK(row["gpu_seconds"]["t4"].get<double>() == Approx(gpus * row["run_time"].get<double>()));
  CHECK(row["gpu_hours"].get<double>() == Approx(row["gpu_seconds"]["t4"].get<double>() / 3600));
  // Its finish-time fairness, measured (test_job_book: its JCT over its ideal time).
  REQUIRE(row["rho"].is_number());
  REQUIRE(job_rho(*b.find("a")));
  CHECK(row["rho"].get<double>() == *job_rho(*b.find("a")));
  std::string csv = history_csv(h);
  CHECK(csv.rfind("name,user,identity,state,submitted,started,ended,wait_s,run_time_s,"
                  "gpu_hours,gpu_hours_t4,restarts,lost_steps,rho,exit_status,reason\n",
                  0) == 0);
  CHECK(csv.find("\na,tester,local:tester,finished,") != std::string::npos);

  // A day after it ended, the round's snapshot forgets it; its name stays taken.
  f.now += 86400 + 1;
  CHECK(f.driver.forgotten.empty());
  f.round();
  CHECK(client.history()["data"]["jobs"].empty());
  CHECK(f.book().retired("a"));
  CHECK(f.driver.forgotten == std::vector<std::string>{"a"});  // the driver's state goes too
  auto e = sia::test::error_of([&] { client.submit({ct::spec("a")}); });
  CHECK(e.first == 65);
  CHECK(e.second.find("never reused") != std::string::npos);
}

TEST_CASE("filters and --since read as documented", "[client]") {
  CHECK(identity_user("local:alice") == "alice");
  CHECK(identity_user("client:bob (key abc)") == "bob");
  CHECK(parse_state_filter({"queued,running", "failed"}, "--state") ==
        std::vector<std::string>{"queued", "running", "failed"});
  CHECK(sia::test::error_of([] { parse_state_filter({"pending"}, "--state"); }).first == 64);
  CHECK(parse_since("7d", 1e6, "--since") == 1e6 - 7 * 86400);
  CHECK(parse_since("90m", 1e6, "--since") == 1e6 - 5400);
  CHECK(parse_since("1700000000", 0, "--since") == 1700000000);
  CHECK(parse_since("2026-12-01", 0, "--since") == 1796083200);
  CHECK(parse_since("2026-12-01T08:00", 0, "--since") == 1796083200 + 8 * 3600);
  CHECK(parse_since("2026-12-01T08:00:30Z", 0, "--since") == 1796083200 + 8 * 3600 + 30);
  for (const char* bad : {"", "x", "7w", "2026-13-01", "2026-12-01T25:00", "99999999999999d",
                          "2026-12-01 08:00", "-5d"}) {
    CHECK(sia::test::error_of([&] { parse_since(bad, 0, "--since"); }).first == 64);
  }
  json doc = envelope(
      "JobStatusList",
      {{"jobs",
        {{{"name", "a"}, {"state", "queued"}, {"identity", "local:alice"}, {"ended", nullptr}},
         {{"name", "b"},
          {"state", "failed"},
          {"identity", "client:bob (key k)"},
          {"ended", 50.0}}}}});
  JobFilter f;
  f.users = {"bob"};
  CHECK(filter_jobs(doc, f)["data"]["jobs"].size() == 1);
  f.users = {"client:alice"};
  CHECK(filter_jobs(doc, f)["data"]["jobs"].empty());
  f = JobFilter{};
  f.states = {"queued"};
  CHECK(filter_jobs(doc, f)["data"]["jobs"][0]["name"] == "a");
  f = JobFilter{};
  f.since = 60;
  CHECK(filter_jobs(doc, f)["data"]["jobs"].size() == 1);
}

TEST_CASE("a report line nested too deeply, or a malformed inbox file, is set aside", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  const std::string na = f.node_of("a");
  // 100,000 levels in one report line: skipped with a warning, the round goes on.
  f.driver.pending_reports.push_back(
      {na, "a", 0,
       "{\"type\":\"report\",\"x\":" + std::string(100000, '[') + std::string(100000, ']') + "}",
       0});
  f.driver.report(na, "a", 300000, {{"step", 3}, {"progress", 1.0}});
  f.round();
  CHECK(f.book().find("a")->step == 3);
  CHECK(std::any_of(f.warnings.begin(), f.warnings.end(),
                    [](const std::string& w) { return w.find("offset 0") != std::string::npos; }));
  // An inbox file whose identity is not a string is refused, and only it.
  f.store.write_inbox(
      {{"type", "submit"}, {"identity", 7}, {"time", 1.0}, {"jobs", json::array()}});
  client.submit({ct::spec("b")});
  CHECK(client.status({})["data"]["jobs"].size() == 2);  // status still reads
  json r = f.round();
  CHECK(r["rejected"].size() == 1);
  CHECK(r["submitted"] == json::array({"b"}));
}

TEST_CASE("nodes that do not answer are left out of the round", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a"), ct::spec("b"), ct::spec("c")});
  f.driver.up.erase("t4-1");
  json r = f.round();
  for (const auto& j : f.driver.deliveries.back().second.jobs) {
    for (const auto& ng : j.nodes) CHECK(ng.node == "t4-0");
  }
  auto down_warnings = [&] {
    return std::count_if(f.warnings.begin(), f.warnings.end(), [](const std::string& w) {
      return w.find("node t4-1 is down") != std::string::npos;
    });
  };
  CHECK(down_warnings() == 1);
  f.round();  // still down: not said again
  CHECK(down_warnings() == 1);
  json nodes = client.nodes();
  for (const auto& n : nodes["data"]["nodes"]) {
    CHECK(n["state"] == (n["name"] == "t4-1" ? "down" : "up"));
  }
  // Back up: its GPUs are used again.
  f.driver.up.insert("t4-1");
  f.round();
  std::set<std::string> used;
  for (const auto& j : f.driver.deliveries.back().second.jobs) {
    for (const auto& ng : j.nodes) used.insert(ng.node);
  }
  CHECK(used.count("t4-1"));
}

TEST_CASE("a duplicate name in the inbox is rejected, not lost", "[round]") {
  Fixture f;
  json spec = job_spec_to_json(ct::spec("a"));
  f.store.write_inbox(inbox_request("submit", "local:one", 1, {{"jobs", {spec}}}));
  f.store.write_inbox(inbox_request("submit", "local:two", 2, {{"jobs", {spec}}}));
  ct::write_text(f.state + "/inbox/x.json", "{not json");
  json r = f.round();
  CHECK(r["submitted"] == json::array({"a"}));
  CHECK(r["rejected"].size() == 2);
  CHECK(f.store.inbox_files().empty());
  CHECK(std::distance(fs::directory_iterator(f.state + "/inbox/rejected"),
                      fs::directory_iterator()) == 2);
  JobBook b = f.book();
  CHECK(b.find("a")->identity == "local:one");
  CHECK(b.rejections().size() == 1);
}

TEST_CASE("a crash mid-round loses no acknowledged record", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  // Records acknowledged after the snapshot, then a torn one (kill -9 mid-append).
  {
    auto lock = f.store.lock("test");
    JobBook b = f.store.load(true, nullptr);
    f.store.commit(b, {make_submit("zz.json", "local:late", 5, {ct::spec("late")})});
  }
  std::string journal = f.store.path("journal.jsonl");
  ct::write_text(journal, ct::slurp(journal) + "{\"crc\":\"00000000\",\"seq\":9");
  f.warnings.clear();
  json r = f.round();
  REQUIRE(!f.warnings.empty());
  CHECK(f.warnings.front().find("incomplete last record") != std::string::npos);
  JobBook b = f.book();
  REQUIRE(b.find("late"));
  CHECK(b.find("late")->state == Lifecycle::running);
  CHECK(b.find("a")->state == Lifecycle::running);
}

TEST_CASE("a stage runs as an external program when overridden", "[round][stage]") {
  const std::string bin = SIA_TEST_BIN_DIR;
  Fixture f({{"stages.estimate", bin + "/sia-estimate --cluster {cluster}"},
             {"stages.solve", bin + "/sia-solve --explain --previous={previous}"},
             {"stages.place", bin + "/sia-place --previous={previous}"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a"), ct::spec("b")});
  f.round();
  CHECK(f.placed_in(0) == std::set<std::string>{"a", "b"});
  json alloc = json::parse(ct::slurp(f.store.round_file(1, "allocation")));
  CHECK(alloc["metadata"]["generator"] == "sia-solve");
  json place = json::parse(ct::slurp(f.store.round_file(1, "placement")));
  CHECK(place["metadata"]["generator"] == "sia-place");
  f.round();  // with --previous this time
  CHECK(f.placed_in(1) == std::set<std::string>{"a", "b"});
  CHECK(fs::exists(f.state + "/run/previous-allocation.json"));
}

TEST_CASE("a failing stage program is an error naming it", "[round][stage]") {
  const std::string bin = SIA_TEST_BIN_DIR;
  Fixture f({{"stages.solve", bin + "/sia-solve --policy nosuch"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  auto e = sia::test::error_of([&] { f.round(); });
  CHECK(e.first == 69);
  CHECK(e.second.find("stage solve (" + bin +
                      "/sia-solve --policy nosuch): exited with status 64") == 0);
  // Nothing was delivered, and the submission is kept for the next round.
  CHECK(f.driver.deliveries.empty());
  CHECK(f.book().find("a"));
}

TEST_CASE("sia-ctl round exits 75 while the lock is held", "[round][lock]") {
  Fixture f;
  auto lock = f.store.lock("test holder");
  std::string out;
  int rc = run_shell(std::string(SIA_TEST_BIN_DIR) + "/sia-ctl round --state-dir " + f.state +
                         " --cluster " + f.cluster_file + " 2>&1",
                     &out);
  CHECK(rc == 75);
  CHECK(out.find("round lock held by pid " + std::to_string(::getpid())) != std::string::npos);
}

TEST_CASE("a job whose workers stop reporting is flagged, restarted, then failed", "[round]") {
  // Rounds are 60 s apart in the fixture.
  Fixture f({{"controller.silent_after", "90"},
             {"controller.hung_timeout", "150"},
             {"controller.hung_retries", "1"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();  // t = 1000: started
  std::string na = f.node_of("a");
  f.driver.report(na, "a", 0, {{"step", 5}, {"reason", "interval"}});
  f.round();  // t = 1060: its report is taken in; the clock moves on to 1120
  auto status_reason = [&] {
    return job_status_list(f.book(), {}, {"a"}, f.now, 90)["data"]["jobs"][0]["reason"]
        .get<std::string>();
  };
  CHECK(status_reason() == "");  // quiet for 60 s
  f.now = 1160;                  // quiet for 100 s: flagged
  CHECK(status_reason().find("silent: no report from its workers for 1m40s") == 0);
  bool explained = false;
  const json why = job_explanation(f.book(), {}, "a", f.now, 90, 3);
  for (const auto& l : why["data"]["lines"]) {
    explained = explained || l.get<std::string>().find("silent: ") == 0;
  }
  CHECK(explained);
  f.now = 1220;  // quiet for 160 s > hung_timeout: left out for a round, so restarted
  json r = f.round();
  CHECK(r["silent"] == json::array({"a"}));
  CHECK(f.placed_in(f.driver.deliveries.size() - 1).count("a") == 0);
  CHECK(f.book().find("a")->silent_restarts == 1);
  r = f.round();  // t = 1280: placed again, a new start
  CHECK(f.placed_in(f.driver.deliveries.size() - 1).count("a") == 1);
  CHECK(f.book().find("a")->state == Lifecycle::running);
  // Its new workers never speak either: after the retries it fails, with the reason.
  f.now = 1280 + 200;
  r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["state"] == "failed");
  CHECK(r["ended"][0]["reason"].get<std::string>().find("no report for 200 s") !=
        std::string::npos);
  CHECK(f.book().find("a")->state == Lifecycle::failed);
}

TEST_CASE("a job its node never takes is undelivered, then restarted, then failed", "[round]") {
  Fixture f({{"controller.hung_timeout", "150"}, {"controller.hung_retries", "1"}});
  for (const auto& n : f.cluster.nodes) f.driver.refuse.insert(n.name);
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();  // placed; the delivery fails
  const json row = job_status_list(f.book(), {}, {"a"}, f.now, 90)["data"]["jobs"][0];
  CHECK(row["state"] == "running");
  CHECK(row["reason_code"] == "undelivered");
  CHECK(row["reason"].get<std::string>().find("the placement is refused") != std::string::npos);
  int silent_rounds = 0;
  json r;
  for (int i = 0; i < 20 && !is_ended(f.book().find("a")->state); ++i) {
    r = f.round();
    silent_rounds += static_cast<int>(r["silent"].size());
  }
  CHECK(silent_rounds == 1);  // left out once, then failed after the retry
  REQUIRE(f.book().find("a")->state == Lifecycle::failed);
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["reason"].get<std::string>().find("has refused its delivery for") !=
        std::string::npos);
}

TEST_CASE("a job that keeps reporting is never taken for hung", "[round]") {
  Fixture f(std::map<std::string, std::string>{{"controller.hung_timeout", "100"}});
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  std::int64_t offset = 0;
  for (int i = 0; i < 6; ++i) {
    std::string na = f.node_of("a");
    f.driver.report(na, "a", offset, {{"step", 10 * (i + 1)}, {"reason", "interval"}});
    offset += 100;
    json r = f.round();
    CHECK(r["silent"].empty());
  }
  CHECK(f.book().find("a")->state == Lifecycle::running);
  CHECK(f.book().find("a")->silent_restarts == 0);
}

TEST_CASE("a job the cluster can never run is refused at submit and in the inbox", "[round]") {
  Fixture f;
  Catalog catalog(sia::test::catalog_dir());
  auto why = [&](const std::string& extra) {
    json j = {{"name", "x"}, {"model", "cifar10"}, {"command", {"/bin/true"}}};
    j.update(json::parse(extra));
    return unschedulable_reason(parse_job_spec(Node(j, "t", "")), catalog, f.cluster, true);
  };
  CHECK(why("{}").empty());
  CHECK(why(R"({"min_gpus": 5})") ==
        "min_gpus: 5 GPUs, more than any GPU type it may use has (at most 4, t4)");
  CHECK(why(R"({"adaptivity": "rigid", "gpus": 8, "batch_size": 64})") ==
        "gpus: 8 GPUs, more than any GPU type it may use has (at most 4, t4)");
  CHECK(why(R"({"allowed_gpu_types": ["t4", "a100"]})") ==
        "allowed_gpu_types: GPU type \"a100\" is not in the cluster (it has: t4)");
  CHECK(why(R"({"pipeline_stages": 2})").rfind("pipeline_stages: a hybrid-parallel job", 0) == 0);
  CHECK(why(R"({"model": "gpt_pmp"})") ==
        "model: \"gpt_pmp\" has no measurements on the GPU types it may use here (t4)");

  // The client refuses before writing anything (the cluster is configured).
  JobSpec big = ct::spec("big", 8);
  big.min_gpus = 8;
  std::vector<std::string> files = {f.dir / "big.json"};
  ct::write_text(files[0], dump_document("JobSpec", json::object(), job_spec_to_json(big), false));
  auto e = sia::test::error_of([&] { read_submissions(files, catalog, &f.cluster); });
  CHECK(e.first == 65);
  CHECK(e.second == files[0] +
                        ": min_gpus: cannot run on cluster box: 8 GPUs, more than any GPU type "
                        "it may use has (at most 4, t4)");
  // A request already in the inbox is rejected by the round with that reason.
  f.store.write_inbox(inbox_request("submit", "local:one", 1, {{"jobs", {job_spec_to_json(big)}}}));
  json r = f.round();
  REQUIRE(r["rejected"].size() == 1);
  CHECK(r["rejected"][0]["reason"].get<std::string>().find("cannot run on cluster box") !=
        std::string::npos);
}

TEST_CASE("a queued job the changed cluster can no longer run fails with the reason", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  JobSpec wide = ct::spec("wide", 4);
  wide.min_gpus = 4;
  client.submit({wide});
  f.driver.up.clear();  // no node answers: the job stays queued
  f.round();
  REQUIRE(f.book().find("wide")->state == Lifecycle::queued);
  // The cluster shrinks to one node of two GPUs.
  ct::write_text(f.cluster_file,
                 "name = \"box\"\n[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 2\n"
                 "count = 1\n");
  f.cluster = read_cluster(f.cluster_file);
  json r = f.round();
  JobBook b = f.book();
  CHECK(b.find("wide")->state == Lifecycle::failed);
  CHECK(b.find("wide")->reason ==
        "cannot run on cluster box: min_gpus: 4 GPUs, more than any GPU type it may use has "
        "(at most 2, t4)");
}

TEST_CASE("a node speaks only for the jobs placed on it: reports and run states", "[round]") {
  Fixture f;
  LocalBackend client(f.config, "local:tester");
  client.submit({ct::spec("a")});
  f.round();
  const std::string na = f.node_of("a");
  REQUIRE(!na.empty());
  std::string nb;
  for (const auto& n : f.cluster.nodes) {
    if (n.name != na) nb = n.name;
  }
  REQUIRE(!nb.empty());
  // The other node says a finished, and reports it at step 999999, twice.
  f.driver.runs[nb]["a"].state = "finished";
  f.driver.report(nb, "a", 0, {{"step", 999999}, {"progress", 999999.0}});
  f.driver.report(nb, "ghost", 0, {{"step", 1}});
  json r = f.round();
  CHECK(r["ended"].empty());
  f.driver.report(nb, "a", 40, {{"step", 999999}});
  f.round();
  JobBook b = f.book();
  CHECK(b.find("a")->state == Lifecycle::running);
  CHECK(b.find("a")->step == 0);
  CHECK(b.find("a")->reports == 0);
  CHECK(b.report_offsets().empty());  // nothing of theirs is journaled
  int warned_a = 0, warned_ghost = 0;
  for (const auto& w : f.warnings) {
    if (w.find("node " + nb + ": job a: report lines refused") != std::string::npos) ++warned_a;
    if (w.find("node " + nb + ": job ghost: report lines refused") != std::string::npos) {
      ++warned_ghost;
    }
  }
  CHECK(warned_ghost == 1);
  CHECK(warned_a >= 1);  // once per round engine; `sia-ctl round` makes one per round
  // Its own node's word counts.
  f.driver.runs[na]["a"].state = "finished";
  CHECK(f.round()["ended"].size() == 1);
}

TEST_CASE("a submission's mistakes are all reported, each with its file and field", "[round]") {
  Fixture f;
  Catalog catalog(sia::test::catalog_dir());
  // Two files: one job without a command and with a batch above cifar10's largest (4096 in
  // the catalog), one with an unknown model and a bad field; and a good job.
  std::vector<std::string> files = {f.dir / "one.toml", f.dir / "two.json"};
  ct::write_text(files[0], "name = \"a\"\nmodel = \"cifar10\"\ninit_batch_size = 1e9\n");
  ct::write_text(files[1], R"({"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
    {"name": "b", "model": "resnet", "command": ["x"]},
    {"name": "c", "model": "cifar10", "command": ["x"], "max_gpus": -1},
    {"name": "d", "model": "cifar10", "command": ["x"], "max_batch_size": 512,
     "adaptivity": "rigid", "gpus": 1, "batch_size": 1024}]}})");
  auto e = sia::test::error_of([&] { read_submissions(files, catalog, &f.cluster); });
  CHECK(e.first == 65);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at <= e.second.size();) {
    std::size_t nl = std::min(e.second.find('\n', at), e.second.size());
    lines.push_back(e.second.substr(at, nl - at));
    at = nl + 1;
  }
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == files[0] +
                        ": command: expected the program and arguments sia-run starts, "
                        "got none");
  CHECK(lines[1] == files[0] +
                        ": init_batch_size: expected a batch from 1 to 4096 (max_batch_size "
                        "of model cifar10 in the catalog), got 1000000000");
  CHECK(lines[2].rfind(files[1] + ": jobs[0]: model: unknown model \"resnet\"", 0) == 0);
  CHECK(lines[3] ==
        files[1] + ": jobs[1].max_gpus: expected an integer from 1 to 1000000, got the number -1");
  CHECK(lines[4] == files[1] +
                        ": jobs[2]: batch_size: expected a batch from 1 to 512 (its "
                        "max_batch_size), got 1024");
}

TEST_CASE("a command line or job spec over its limit is refused at submit and in the inbox",
          "[round][limits]") {
  Fixture f;
  Catalog catalog(sia::test::catalog_dir());
  JobLimits limits{1000, 4000};
  JobSpec spec = ct::spec("long", 1);
  spec.command = {"/bin/echo", std::string(995, 'a')};  // 1004 bytes
  auto e = sia::test::error_of([&] { validate_submission(spec, catalog, "job.toml", limits); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "job.toml: command: 1004 bytes, over the limit of 1000 (controller.max_command_bytes)");
  spec.command = {"/bin/echo"};
  spec.allowed_gpu_types.assign(1000, "t4");
  e = sia::test::error_of([&] { validate_submission(spec, catalog, "job.toml", limits); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("job.toml: the job spec is ", 0) == 0);
  CHECK(e.second.find(" bytes, over the limit of 4000 (controller.max_job_bytes)") !=
        std::string::npos);
  spec.allowed_gpu_types = {"t4"};
  CHECK(sia::test::error_of([&] {
          validate_submission(spec, catalog, "job.toml", limits);
        }).first == 0);
  // The defaults: 64 KiB of command line, 128 KiB of spec; the settings give them.
  CHECK(JobLimits{}.command_bytes == 65536);
  CHECK(job_limits(f.config.controller).command_bytes == 65536);
  CHECK(job_limits(f.config.controller).job_bytes == 131072);

  // The round applies the controller's limits to what it finds in the inbox.
  f.config.controller.max_command_bytes = 1000;
  JobSpec huge = ct::spec("huge", 1);
  huge.command = {"/bin/echo", std::string(5000, 'b')};
  f.store.write_inbox(
      inbox_request("submit", "local:one", 1, {{"jobs", {job_spec_to_json(huge)}}}));
  json r = f.round();
  REQUIRE(r["rejected"].size() == 1);
  CHECK(r["rejected"][0]["reason"].get<std::string>().find(
            "command: 5009 bytes, over the limit of 1000 (controller.max_command_bytes)") !=
        std::string::npos);
  CHECK_FALSE(f.book().find("huge"));
}

namespace {

// A job of exactly four GPUs: on two of the fixture's nodes of two GPUs.
JobSpec two_node_spec(const std::string& name) {
  JobSpec s = ct::spec(name, 4);
  s.min_gpus = 4;
  return s;
}

// The nodes a job is placed on now, in rank order.
std::vector<std::string> nodes_of(const JobBook& book, const std::string& job) {
  std::vector<std::string> out;
  const BookJob* b = book.find(job);
  if (b && b->placed) {
    for (const auto& ng : b->placed->nodes) out.push_back(ng.node);
  }
  return out;
}

// Job a placed on two nodes (`na`, rank order) with controller.peer_retries 1.
struct SpanningJob {
  Fixture f{{{"controller.peer_retries", "1"}}, 3};
  LocalBackend client{f.config, "local:tester"};
  std::vector<std::string> na;
  SpanningJob() {
    client.submit({two_node_spec("a")});
    f.round();
    na = nodes_of(f.book(), "a");
    REQUIRE(na.size() == 2);
  }
  // Its nodes cannot reach each other: the ranks on both lose their peers (69).
  void both_lose() {
    for (const auto& n : na) {
      f.driver.runs[n]["a"].state = "failed";
      f.driver.runs[n]["a"].exit_status = 69;
    }
  }
};

}  // namespace

TEST_CASE("ranks that lost a peer on a node that went down resume elsewhere, not failed",
          "[round][peer]") {
  Fixture f({}, 3);
  LocalBackend client(f.config, "local:tester");
  client.submit({two_node_spec("a")});
  f.round();
  const std::vector<std::string> first = nodes_of(f.book(), "a");
  REQUIRE(first.size() == 2);
  const std::string survivor = first[0], lost = first[1];
  // The lost node's agent goes silent; the survivor's ranks cannot reach their peer (69).
  f.driver.silent.insert(lost);
  f.driver.runs[survivor]["a"].state = "failed";
  f.driver.runs[survivor]["a"].exit_status = 69;
  json r = f.round();  // silent, not fenced: its word may still come
  CHECK(r["ended"].empty());
  CHECK(f.book().find("a")->state == Lifecycle::running);
  CHECK(nodes_of(f.book(), "a") == first);
  // Fenced (down): the job is not failed, it resumes without that node from its checkpoint.
  f.driver.silent.erase(lost);
  f.driver.up.erase(lost);
  r = f.round();
  CHECK(r["ended"].empty());
  JobBook b = f.book();
  CHECK(b.find("a")->state == Lifecycle::running);
  const std::vector<std::string> second = nodes_of(b, "a");
  REQUIRE(second.size() == 2);
  CHECK(std::find(second.begin(), second.end(), lost) == second.end());
  CHECK(b.find("a")->starts == 2);
  CHECK(f.driver.runs[survivor]["a"].state == "running");  // started again there
  bool warned = false;
  for (const auto& w : f.warnings) {
    warned = warned || w.find("job a: its ranks on " + survivor +
                              " lost a peer on a node that "
                              "is down; it resumes from its checkpoint") == 0;
  }
  CHECK(warned);
  // The old node comes back with its ranks' own lost peer: its word counts for nothing.
  f.driver.up.insert(lost);
  f.driver.runs[lost]["a"].state = "failed";
  f.driver.runs[lost]["a"].exit_status = 69;
  r = f.round();
  CHECK(r["ended"].empty());
  // The new generation ends well: the job finishes once.
  f.driver.runs[second[0]]["a"].state = "finished";
  r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["state"] == "finished");
}

TEST_CASE("ranks that lost a peer wait for the peer's node, which is blamed", "[round][peer]") {
  Fixture f({}, 3);
  LocalBackend client(f.config, "local:tester");
  client.submit({two_node_spec("a")});
  f.round();
  // a: one node's ranks lost their peer while the other node's still run: wait.
  std::vector<std::string> na = nodes_of(f.book(), "a");
  REQUIRE(na.size() == 2);
  f.driver.runs[na[0]]["a"].state = "failed";
  f.driver.runs[na[0]]["a"].exit_status = 69;
  CHECK(f.round()["ended"].empty());
  // The other node's rank failed by itself: the job failed, blamed on it.
  f.driver.runs[na[1]]["a"].state = "failed";
  f.driver.runs[na[1]]["a"].exit_status = 1;
  json r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["state"] == "failed");
  CHECK(r["ended"][0]["reason"].get<std::string>().find("failed on " + na[1]) == 0);
}

TEST_CASE_METHOD(SpanningJob,
                 "a job that trains past a loss of its peers has its peer_retries again",
                 "[round][peer]") {
  const std::string rank0 = f.book().find("a")->report_node;
  std::int64_t offset = 0;
  auto report_step = [&](std::int64_t step) {
    f.driver.report(rank0, "a", offset, {{"step", step}, {"reason", "interval"}});
    offset += 100;
  };
  report_step(10);
  f.round();
  both_lose();  // a partition: the one restart controller.peer_retries allows
  CHECK(f.round()["ended"].empty());
  CHECK(f.book().find("a")->peer_retries_used == 1);
  // The new attempt resumes from its checkpoint and trains past step 10: the cut is over.
  report_step(8);
  f.round();
  CHECK(f.book().find("a")->peer_retries_used == 1);
  report_step(11);
  f.round();
  CHECK(f.book().find("a")->peer_retries_used == 0);
  // What status and explain say of it (controller.peer_retries 1, from the settings).
  auto peer_line = [&] {
    std::string found;
    const json doc = client.explain("a");
    for (const auto& l : doc["data"]["lines"]) {
      if (l.get<std::string>().rfind("peer-lost restarts: ", 0) == 0) found = l.get<std::string>();
    }
    return found;
  };
  CHECK(peer_line() ==
        "peer-lost restarts: 1 (0 of 1 retries used since its last progress past where its "
        "peers were lost, controller.peer_retries)");
  // Another, unrelated partition later: restarted again, not failed.
  both_lose();
  json r = f.round();
  CHECK(r["ended"].empty());
  CHECK(f.book().find("a")->peer_restarts == 2);
  CHECK(f.book().find("a")->peer_retries_used == 1);
  const json row = client.status({"a"})["data"]["jobs"][0];
  CHECK(row["peer_restarts"] == 2);
  CHECK(row["peer_retries_used"] == 1);
  const json why = client.explain("a")["data"];
  CHECK(why["peer_restarts"] == 2);
  CHECK(why["peer_retries_used"] == 1);
  CHECK(why["peer_retries"] == 1);
  CHECK(peer_line().rfind("peer-lost restarts: 2 (1 of 1 retries used since its last progress",
                          0) == 0);
  bool warned = false;
  for (const auto& w : f.warnings) {
    warned = warned ||
             w.find(
                 "restarts from its checkpoint as attempt 2, restart 1 of at most "
                 "1 since it last trained past where its peers were lost") != std::string::npos;
  }
  CHECK(warned);
  // Lost once more before it regained its ground: the bound is reached.
  both_lose();
  r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["state"] == "failed");
  CHECK(peer_line().rfind("peer-lost restarts: 2 (1 of 1 retries used", 0) == 0);
}

TEST_CASE_METHOD(
    SpanningJob,
    "ranks that lost their peers while every node was up restart, then fail at the bound",
    "[round][peer]") {
  both_lose();
  const int generation = f.driver.runs[na[0]]["a"].generation;
  json r = f.round();
  CHECK(r["ended"].empty());
  JobBook b = f.book();
  CHECK(b.find("a")->state == Lifecycle::running);
  CHECK(b.find("a")->peer_restarts == 1);
  CHECK(b.find("a")->notice.find("restarted from its checkpoint (attempt 1)") != std::string::npos);
  // The new attempt is a restart in the round's placement, though the placement is the
  // same: the drivers stop it everywhere before it starts anywhere (ctl/stop_first.hpp).
  REQUIRE(f.driver.deliveries.back().second.find("a"));
  CHECK(f.driver.deliveries.back().second.find("a")->restart);
  for (const auto& n : na) {  // started again on the same placement: a new attempt
    CHECK(f.driver.runs[n]["a"].state == "running");
    CHECK(f.driver.runs[n]["a"].generation > generation);
  }
  bool warned = false;
  for (const auto& w : f.warnings) {
    warned = warned || w.find(
                           "job a: its ranks lost their peers on every node while all were "
                           "up") == 0;
  }
  CHECK(warned);
  // The same generation's word again counts once: no second attempt for it, and no
  // restart.
  r = f.round();
  CHECK(r["ended"].empty());
  REQUIRE(f.driver.deliveries.back().second.find("a"));
  CHECK_FALSE(f.driver.deliveries.back().second.find("a")->restart);
  CHECK(f.book().find("a")->peer_restarts == 1);
  // Lost again: the bound (controller.peer_retries 1) is reached, the job fails with why.
  both_lose();
  r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["state"] == "failed");
  const std::string reason = r["ended"][0]["reason"].get<std::string>();
  CHECK(reason.find("its ranks lost their peers on every node while all were up, 2 time(s) "
                    "since it last trained past where its peers were lost "
                    "(controller.peer_retries 1)") == 0);
  CHECK(f.book().find("a")->reason == reason);
  // A job on one node whose ranks exit 69 failed by its own doing.
  JobSpec one = ct::spec("c", 2);
  one.min_gpus = 2;
  client.submit({one});
  f.round();
  const std::vector<std::string> nc = nodes_of(f.book(), "c");
  REQUIRE(nc.size() == 1);
  f.driver.runs[nc[0]]["c"].state = "failed";
  f.driver.runs[nc[0]]["c"].exit_status = 69;
  r = f.round();
  REQUIRE(r["ended"].size() == 1);
  CHECK(r["ended"][0]["job"] == "c");
  CHECK(r["ended"][0]["state"] == "failed");
  CHECK(r["ended"][0]["reason"].get<std::string>().find("failed on " + nc[0]) == 0);
}
