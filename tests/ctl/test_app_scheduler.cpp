// The controller's app scheduler: successive halving over an app's trials, from their
// reports, round by round (round_engine.hpp, step 3b), with the FakeDriver.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "ctl/client_backend.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/client_render.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/submission.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
namespace ct = sia::ctl::test;

namespace {

// App `name` of `trials` one-GPU trials (NAME-000, ...), successive halving over `rungs`
// phases (or `kind`), eta 2.
Submission search(const std::string& name, int trials, int rungs, bool minimize = true,
                  AppSchedulerKind kind = AppSchedulerKind::successive_halving) {
  AppSpec a;
  a.name = name;
  a.scheduler = {kind, 2, rungs};
  a.minimize = minimize;
  a.trial_template =
      json{{"model", "cifar10"}, {"max_gpus", 1}, {"command", {"/bin/true", "--lr", "{lr}"}}};
  std::vector<double> lrs;
  for (int i = 0; i < trials; ++i) lrs.push_back(0.01 * (i + 1));
  a.grid = {{"lr", lrs}};
  Submission s;
  s.jobs = expand_trials(a, "test");
  s.apps = {a};
  return s;
}

struct Search : ct::RoundFixture {
  LocalBackend client{config, "local:tester"};
  std::map<std::string, std::int64_t> offset;
  // A report of trial `t` from its node: the fraction of its training and its loss.
  void report(const std::string& t, double fraction, double loss) {
    driver.report(node_of(t), t, offset[t], {{"fraction", fraction}, {"loss", loss}});
    offset[t] += 1000;
  }
  // Reports of trials APP-000, APP-001, ...: the same fraction, one loss each.
  void reach(const std::string& app, double fraction, const std::vector<double>& losses) {
    for (std::size_t i = 0; i < losses.size(); ++i) {
      report(app + "-00" + std::to_string(i), fraction, losses[i]);
    }
  }
  BookJob job(const std::string& t) const { return *book().find(t); }
  BookApp app(const std::string& a) const { return *book().find_app(a); }
};

}  // namespace

TEST_CASE("successive halving stops the worse half at the rung", "[app]") {
  Search f;
  f.client.submit(search("s", 4, 2));
  f.round();  // takes the app in; its four trials run, one GPU each
  REQUIRE(f.placed_in(0).size() == 4);
  // The policies see each trial with its app (Themis bids per app).
  const json goodput = json::parse(ct::slurp(f.store.round_file(1, "goodput")));
  REQUIRE(goodput["data"]["jobs"].size() == 4);
  for (const auto& row : goodput["data"]["jobs"]) {
    CHECK(row["app"] == json{{"eta", 2}, {"name", "s"}, {"phase", 0}, {"rungs", 2}, {"trials", 4}});
  }
  // Three reach the rung (half their training): they wait, and the fourth trains on.
  f.report("s-000", 0.5, 0.4);
  f.report("s-001", 0.5, 0.1);
  f.report("s-002", 0.6, 0.3);
  f.report("s-003", 0.2, 0.9);
  json r = f.round();
  CHECK(r["at_rung"] == json::array({"s-000", "s-001", "s-002"}));
  CHECK(r["stopped"].empty());
  CHECK(f.placed_in(1) == std::set<std::string>{"s-003"});
  json st = f.client.status({"s-000"});
  CHECK(st["data"]["jobs"][0]["reason_code"] == "rung");
  // The last one reaches it with a loss between: the two best go on, the rest stop.
  f.report("s-003", 0.5, 0.2);
  r = f.round();
  CHECK(r["stopped"] == json::array({"s-002", "s-000"}));  // in rank order
  CHECK(f.job("s-002").state == Lifecycle::stopped);
  CHECK(f.job("s-002").reason ==
        "successive halving: phase 1 of 2, loss 0.3 ranked 3 of 4 (kept 2)");
  CHECK(f.job("s-000").reason.find("ranked 4 of 4") != std::string::npos);
  CHECK(f.app("s").phase() == 1);
  CHECK(f.placed_in(2) == std::set<std::string>{"s-001", "s-003"});  // GPUs freed at once
  // The status shows the app: phase, counts, best so far.
  json apps = f.client.status({})["data"]["apps"];
  REQUIRE(apps.size() == 1);
  CHECK(apps[0]["phase"] == 2);
  CHECK(apps[0]["live"] == 2);
  CHECK(apps[0]["stopped"] == 2);
  CHECK(apps[0]["best"] == 0.1);
  CHECK(apps[0]["best_trial"] == "s-001");
  json one = f.client.status({"s"})["data"];  // an app's name: it and its trials
  CHECK(one["apps"].size() == 1);
  CHECK(one["jobs"].size() == 4);
}

TEST_CASE("ties rank by name; a trial without the metric ranks last", "[app]") {
  Search f;
  f.client.submit(search("t", 4, 2));
  f.round();
  f.report("t-000", 0.5, 0.5);
  f.report("t-001", 0.5, 0.5);
  f.report("t-002", 0.5, 0.5);
  f.driver.report(f.node_of("t-003"), "t-003", 0, {{"fraction", 0.5}});  // no loss
  json r = f.round();
  CHECK(r["stopped"] == json::array({"t-002", "t-003"}));
  CHECK(f.job("t-003").reason.find("loss no value ranked 4 of 4") != std::string::npos);
}

TEST_CASE("direction max keeps the highest metric", "[app]") {
  Search f;
  f.client.submit(search("m", 4, 2, /*minimize=*/false));
  f.round();
  f.reach("m", 0.5, {0.4, 0.1, 0.3, 0.2});
  json r = f.round();
  CHECK(r["stopped"] == json::array({"m-003", "m-001"}));
}

TEST_CASE("a trial that failed counts as ended at the rung", "[app]") {
  Search f;
  f.client.submit(search("x", 4, 2));
  f.round();
  f.driver.runs[f.node_of("x-000")]["x-000"].state = "failed";
  f.report("x-001", 0.5, 0.3);
  f.report("x-002", 0.5, 0.1);
  f.report("x-003", 0.5, 0.2);
  json r = f.round();
  CHECK(f.job("x-000").state == Lifecycle::failed);
  CHECK(r["stopped"] == json::array({"x-001"}));  // ceil(3 / 2) = 2 kept
  CHECK(f.job("x-001").reason.find("ranked 3 of 3 (kept 2)") != std::string::npos);
}

TEST_CASE("survivors past the next budget close it in the same round", "[app]") {
  Search f;
  f.client.submit(search("y", 4, 3));  // budgets 1/4, 1/2, 1
  f.round();
  f.reach("y", 0.6, {0.4, 0.1, 0.3, 0.2});
  json r = f.round();
  CHECK(r["stopped"] == json::array({"y-002", "y-000", "y-003"}));
  CHECK(f.app("y").phase() == 2);
  CHECK(f.job("y-001").state == Lifecycle::running);
}

TEST_CASE("cancel APP cancels every trial of the app", "[app]") {
  Search f;
  f.client.submit(search("c", 3, 2));
  f.client.submit({ct::spec("other")});
  f.round();
  f.client.request(JobRequest::cancel, {"c"});
  f.round();
  for (const char* t : {"c-000", "c-001", "c-002"}) CHECK(f.job(t).state == Lifecycle::cancelled);
  CHECK(f.job("other").state == Lifecycle::running);
  CHECK(f.client.status({"c"})["data"]["apps"][0]["state"] == "cancelled");
  // Its name stays taken, for a job as for an app.
  CHECK(sia::test::error_of([&] { f.client.submit({ct::spec("c")}); }).first == 65);
}

TEST_CASE("a restarted controller keeps the app's phase and rung metrics", "[app]") {
  Search f;
  f.client.submit(search("r", 4, 3));
  f.round();
  for (const char* t : {"r-000", "r-001", "r-002", "r-003"}) f.report(t, 0.3, 0.5);
  f.round();  // phase 1 closes (budget 1/4): two stopped
  REQUIRE(f.app("r").phase() == 1);
  f.report("r-000", 0.5, 0.7);  // r-000 and r-001 survived (ties by name)
  f.round();
  // A new controller process reads the snapshot (and the journal after it).
  // Its nodes get the phase's budget: the trial's workers stop there.
  CHECK(node_job_json(f.book(), f.job("r-001"), "")["state"]["stop_fraction"] == 0.5);
  JobBook again = f.store.load(false, nullptr);
  CHECK(again.find_app("r")->phase() == 1);
  CHECK(again.find("r-000")->rung_metric == 0.7);
  CHECK(again.at_rung(*again.find("r-000")));
  CHECK_FALSE(again.at_rung(*again.find("r-001")));
  // The same through the journal alone: replaying the records gives the same book.
  JobBook replay;
  Submission s = search("q", 2, 2);
  replay.apply(make_submit("f", "local:me", 10, s.jobs, s.apps));
  CHECK(replay.apply(make_app_phase("q", 1, 20)));
  CHECK_FALSE(replay.apply(make_app_phase("q", 1, 21)));  // once
  JobBook round_trip = JobBook::from_json(replay.to_json(), "snapshot");
  CHECK(round_trip.find_app("q")->phase() == 1);
  CHECK(round_trip.find_app("q")->trials.size() == 2);
}

TEST_CASE("a submission's jobs may name only its own apps", "[app]") {
  Submission s = search("v", 2, 2);
  s.apps.clear();
  CHECK(sia::test::error_of([&] { validate_apps(s, "x"); }).first == 65);
  Submission t = search("w", 2, 2);
  t.jobs.clear();
  CHECK(sia::test::error_of([&] { validate_apps(t, "x"); }).first == 65);
}

TEST_CASE("hyperband closes each bracket's phases on its own trials", "[app]") {
  Search f;
  // Eta 2, three brackets: trials 000 and 003 in bracket 1 (budgets 1/4, 1/2, 1), 001 in
  // bracket 2 (1/2, 1), 002 in bracket 3 (to the end).
  f.client.submit(search("h", 4, 3, true, AppSchedulerKind::hyperband));
  f.round();
  REQUIRE(f.placed_in(0).size() == 4);
  const json goodput = json::parse(ct::slurp(f.store.round_file(1, "goodput")));
  std::map<std::string, json> row;
  for (const auto& x : goodput["data"]["jobs"]) row[x["name"]] = x["app"];
  CHECK(row["h-000"] == json{{"bracket", 0},
                             {"brackets", 3},
                             {"eta", 2},
                             {"name", "h"},
                             {"phase", 0},
                             {"rungs", 3},
                             {"trials", 2}});
  CHECK(row["h-001"]["bracket"] == 1);
  CHECK(row["h-001"]["rungs"] == 2);
  CHECK(row["h-002"]["rungs"] == 1);
  CHECK(node_job_json(f.book(), f.job("h-000"), "")["state"]["stop_fraction"] == 0.25);
  CHECK(node_job_json(f.book(), f.job("h-001"), "")["state"]["stop_fraction"] == 0.5);
  CHECK_FALSE(node_job_json(f.book(), f.job("h-002"), "").contains("state"));
  // h-000 is at its bracket's first rung; h-001, as far along, is not at its own.
  f.report("h-000", 0.25, 0.4);
  f.report("h-001", 0.3, 0.5);
  json r = f.round();
  CHECK(r["at_rung"] == json::array({"h-000"}));
  CHECK(r["stopped"].empty());
  CHECK(f.client.status({"h-000"})["data"]["jobs"][0]["reason"].get<std::string>().find(
            "phase 1 of 3 of bracket 1 of 3 of app h") != std::string::npos);
  // Bracket 1's other trial reaches the rung with a better loss: bracket 1 stops h-000;
  // h-001, alone in bracket 2, goes on at its rung; bracket 3 has no phase to close.
  f.report("h-003", 0.25, 0.2);
  f.report("h-001", 0.5, 0.6);
  r = f.round();
  CHECK(r["stopped"] == json::array({"h-000"}));
  CHECK(f.job("h-000").reason ==
        "hyperband bracket 1 of 3: phase 1 of 3, loss 0.4 ranked 2 of 2 (kept 1)");
  CHECK(f.app("h").phases == std::vector<int>{1, 1, 0});
  CHECK(f.placed_in(2) == std::set<std::string>{"h-001", "h-002", "h-003"});
  CHECK(node_job_json(f.book(), f.job("h-003"), "")["state"]["stop_fraction"] == 0.5);
  CHECK_FALSE(node_job_json(f.book(), f.job("h-001"), "").contains("state"));  // to the end
  json app = f.client.status({"h"})["data"]["apps"][0];
  CHECK(app["scheduler"] == "hyperband");
  CHECK(app["brackets"] == json::array({{{"phase", 2}, {"phases", 3}, {"trials", 2}},
                                        {{"phase", 2}, {"phases", 2}, {"trials", 1}},
                                        {{"phase", 1}, {"phases", 1}, {"trials", 1}}}));
  // The phases survive a restart (snapshot and journal), and a journal's app-phase record
  // moves only its bracket.
  JobBook again = f.store.load(false, nullptr);
  CHECK(again.find_app("h")->phases == std::vector<int>{1, 1, 0});
  Submission s = search("q", 4, 3, true, AppSchedulerKind::hyperband);
  JobBook replay;
  replay.apply(make_submit("f", "local:me", 10, s.jobs, s.apps));
  CHECK(replay.apply(make_app_phase("q", 1, 20, 1)));
  CHECK_FALSE(replay.apply(make_app_phase("q", 2, 21, 1)));  // bracket 2 has two phases
  CHECK_FALSE(replay.apply(make_app_phase("q", 1, 22, 3)));  // no fourth bracket
  CHECK(replay.find_app("q")->phases == std::vector<int>{0, 1, 0});
  JobBook round_trip = JobBook::from_json(replay.to_json(), "snapshot");
  CHECK(round_trip.find_app("q")->phases == std::vector<int>{0, 1, 0});
}

TEST_CASE("status APP and cancel APP name an app still in the inbox", "[app]") {
  Search f;
  f.client.submit(search("i", 2, 2));  // no round has taken it in yet
  json d = f.client.status({"i"})["data"];
  REQUIRE(d["apps"].size() == 1);
  CHECK(d["apps"][0]["state"] == "submitted");
  CHECK(d["apps"][0]["trials"] == json::array({"i-000", "i-001"}));
  CHECK(d["jobs"].size() == 2);
  CHECK(d["jobs"][1]["reason_code"] == "inbox");
  f.client.request(JobRequest::cancel, {"i"});
  CHECK(sia::test::error_of([&] { f.client.request(JobRequest::hold, {"i"}); }).first == 66);
  f.round();  // takes in the app, then its cancellation: no trial runs
  CHECK(f.job("i-000").state == Lifecycle::cancelled);
  CHECK(f.job("i-001").state == Lifecycle::cancelled);
  CHECK(f.client.status({"i"})["data"]["apps"][0]["state"] == "cancelled");
  CHECK(sia::test::error_of([&] { f.client.status({"nope"}); }).first == 66);
}

TEST_CASE("every round estimates each app's and trial's rho; status shows them", "[app]") {
  Search f;
  f.client.submit(search("s", 2, 2));
  f.round();
  // One unit (the app) contends: N_avg 1 for it and its trials, each with an estimate.
  CHECK(f.app("s").fair.rounds == 1);
  CHECK(f.app("s").fair.contention_sum == 1);
  CHECK(f.app("s").fair.t_id > 0);
  CHECK(f.job("s-000").fair.rounds == 1);
  CHECK(f.job("s-000").fair.t_id > 0);
  f.round();
  CHECK(f.app("s").fair.rounds == 2);
  const json d = f.client.status({})["data"];
  const json& app = d["apps"][0];
  REQUIRE(app["rho"].is_number());
  CHECK(app["rho"].get<double>() == Approx(f.app("s").fair.t_sh / f.app("s").fair.t_id));
  CHECK(app["rho_measured"] == false);
  CHECK(app["fair"]["n_avg"] == 1.0);
  CHECK(d["jobs"][0]["rho"].is_number());
  CHECK(d["fairness"]["apps"]["count"] == 1);
  CHECK(d["fairness"]["jobs"]["count"] == 2);
  // explain says it in words.
  bool said = false;
  const json explained = f.client.explain("s-000");  // kept: the loop reads into it
  for (const auto& l : explained["data"]["lines"]) {
    said = said || l.get<std::string>().rfind("fairness: rho ", 0) == 0;
  }
  CHECK(said);
  // The round records carry the figures: a replayed journal gives the same book.
  JobBook again = f.store.load(false, nullptr);
  CHECK(again.find_app("s")->fair.t_sh == f.app("s").fair.t_sh);
}

TEST_CASE("status shows every trial's hyper-parameters; --state filters the apps too", "[app]") {
  Search f;
  f.client.submit(search("h", 2, 2));
  json d = f.client.status({})["data"];  // still in the inbox
  REQUIRE(d["jobs"].size() == 2);
  CHECK(d["jobs"][0]["app"] == "h");
  CHECK(d["jobs"][0]["hparams"] == json{{"lr", 0.01}});
  CHECK(d["jobs"][1]["hparams"] == json{{"lr", 0.02}});
  f.round();
  d = f.client.status({"h"})["data"];
  CHECK(d["jobs"][1]["hparams"] == json{{"lr", 0.02}});
  CHECK(d["jobs"][1]["state"] == "running");
  // The table has a column of them.
  const std::string table = render_table(f.client.status({"h"}), 0);
  CHECK(table.find("HPARAMS") != std::string::npos);
  CHECK(table.find("h-001  lr=0.02") != std::string::npos);
  // --state keeps the apps in that state, as it does jobs.
  JobFilter running;
  running.states = {"running"};
  CHECK(filter_jobs(f.client.status({}), running)["data"]["apps"].size() == 1);
  JobFilter finished;
  finished.states = {"finished"};
  const json none = filter_jobs(f.client.status({}), finished)["data"];
  CHECK(none["apps"].empty());
  CHECK(none["jobs"].empty());
  // A job that is no trial has none.
  f.client.submit({ct::spec("plain")});
  CHECK(f.client.status({"plain"})["data"]["jobs"][0]["hparams"] == json::object());
}

TEST_CASE("explain APP: scheduler, phase, metric, and each trial's values and fate", "[app]") {
  Search f;
  f.client.submit(search("e", 4, 2));
  json x = f.client.explain("e");  // in the inbox
  CHECK(x["kind"] == "AppExplanation");
  CHECK(x["data"]["state"] == "submitted");
  REQUIRE(x["data"]["trials"].size() == 4);
  CHECK(x["data"]["trials"][3]["hparams"] == json{{"lr", 0.04}});
  CHECK(x["data"]["trials"][3]["state"] == "submitted");
  f.round();
  f.reach("e", 0.5, {0.4, 0.1, 0.3, 0.2});
  f.round();
  x = f.client.explain("e")["data"];
  CHECK(x["app"] == "e");
  CHECK(x["scheduler"] == "successive-halving");
  CHECK(x["metric"] == "loss");
  CHECK(x["phase"] == 2);
  CHECK(x["best_trial"] == "e-001");
  std::map<std::string, json> trials;
  for (const auto& t : x["trials"]) trials[t["name"]] = t;
  CHECK(trials["e-000"]["state"] == "stopped");
  CHECK(trials["e-000"]["metric"] == 0.4);
  CHECK(trials["e-000"]["hparams"] == json{{"lr", 0.01}});
  CHECK(trials["e-000"]["reason"] ==
        "successive halving: phase 1 of 2, loss 0.4 ranked 4 of 4 (kept 2)");
  CHECK(trials["e-001"]["state"] == "running");
  const std::string text = render_table(f.client.explain("e"), 0);

  CHECK(text.find("app e: running (after round 2)") == 0);
  CHECK(text.find("scheduler successive-halving (eta 2, 2 phases)") != std::string::npos);
  CHECK(text.find("phase 2 of 2: its trials train to the full training") != std::string::npos);
  CHECK(text.find("best loss so far 0.1000: e-001 (lr=0.02)") != std::string::npos);
  CHECK(text.find("e-000  lr=0.01  stopped  0.4000") != std::string::npos);
  // A trial's own explanation names its app and values.
  bool said = false;
  const json trial = f.client.explain("e-002");
  for (const auto& l : trial["data"]["lines"]) {
    said = said || l.get<std::string>() ==
                       "trial of app e with lr=0.03 (sia-ctl explain e: the "
                       "search)";
  }
  CHECK(said);
  CHECK(f.client.explain("e-002")["data"]["hparams"] == json{{"lr", 0.03}});
}

TEST_CASE("submit --dry-run checks what submit checks: names used or waiting", "[app]") {
  Search f;
  const Submission s = search("d", 2, 2);
  f.client.check_submit(s);  // free: nothing written
  CHECK(f.client.status({})["data"]["jobs"].empty());
  f.client.submit(s);
  auto e = sia::test::error_of([&] { f.client.check_submit(s); });
  CHECK(e.first == 65);
  // Every name at once, each on its line.
  CHECK(e.second ==
        "\"d-000\" is submitted already (waiting in the inbox)\n"
        "\"d-001\" is submitted already (waiting in the inbox)\n"
        "\"d\" is submitted already (waiting in the inbox)");
  f.round();
  e = sia::test::error_of([&] { f.client.check_submit(s); });
  CHECK(e.second.find("job \"d-000\" exists already (running)") == 0);
}
