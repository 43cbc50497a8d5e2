#include <catch2/catch.hpp>

#include "ctl/client_docs.hpp"
#include "ctl/job_book.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
namespace ct = sia::ctl::test;

namespace {

json round_record(std::int64_t round, double time, const json& placement_jobs) {
  return {
      {"type", "round"},         {"round", round},        {"time", time},
      {"cluster", nullptr},      {"allocation", nullptr}, {"placement", {{"jobs", placement_jobs}}},
      {"models", json::object()}};
}

json placed(const std::string& job, const std::string& node, std::vector<int> gpus,
            int local_bsz = 16) {
  return {{"name", job},
          {"gpu_type", "t4"},
          {"nodes", {{{"name", node}, {"gpus", gpus}}}},
          {"batch_size", local_bsz * static_cast<int>(gpus.size())},
          {"local_bsz", local_bsz},
          {"accum_steps", 0}};
}

json delivered(const std::string& node, const std::string& job, const std::string& action,
               int generation) {
  return {{"type", "delivered"},
          {"round", 1},
          {"node", node},
          {"ok", true},
          {"error", ""},
          {"actions", {{{"job", job}, {"action", action}, {"generation", generation}}}}};
}

}  // namespace

TEST_CASE("reports become observations, gradient statistics and progress", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  const BookJob& a = *book.find("a");
  CHECK(a.state == Lifecycle::running);
  CHECK(a.starts == 1);
  CHECK(a.restoring);
  json rep = {{"type", "report"}, {"round", 1},          {"step", 10},       {"progress", 8.5},
              {"step_time", 0.2}, {"sync_time", 0.05},   {"local_bsz", 16},  {"accum_steps", 0},
              {"world_size", 2},  {"nodes", 1},          {"gpu_type", "t4"}, {"grad_sqr", 0.5},
              {"grad_var", 2.0},  {"reason", "interval"}};
  CHECK(book.apply(make_report("t4-0", "a", 0, 100, rep)));
  rep["step_time"] = 0.4;
  rep["step"] = 20;
  rep["progress"] = 17.0;
  CHECK(book.apply(make_report("t4-0", "a", 100, 200, rep)));
  // The same line again (same node, job and offset) changes nothing.
  CHECK_FALSE(book.apply(make_report("t4-0", "a", 100, 200, rep)));
  CHECK_FALSE(book.apply(make_report("t4-0", "a", 0, 100, rep)));
  CHECK(a.reports == 2);
  REQUIRE(a.observations.size() == 1);
  CHECK(a.observations[0].count == 2);
  CHECK(a.observations[0].point.step_time == Approx(0.3));
  CHECK(a.observations[0].point.replicas == 2);
  CHECK(a.observations[0].point.local_bsz == 16);
  CHECK(!a.restoring);  // a report of the current generation arrived
  CHECK(a.step == 20);
  CHECK(book.report_next("t4-0", "a") == 200);

  JobState s = book.job_state(a, 400);
  CHECK(s.age == 300);
  CHECK(s.progress == 17);
  REQUIRE(s.gradient);
  CHECK(s.gradient->var == 2.0);
  REQUIRE(s.current);
  CHECK(s.current->gpu_type == "t4");
  CHECK(s.current->placement == std::vector<int>{2});
  CHECK(s.observations.size() == 1);
  CHECK(s.restarts == 0);

  // Attained service: 2 GPUs from t = 160 to the next round at 220.
  book.apply(round_record(2, 220, json::array({placed("a", "t4-0", {0, 1}, 8)})));
  CHECK(a.attained_service == 120);
  book.apply(delivered("t4-0", "a", "restart", 2));
  CHECK(a.starts == 2);
  CHECK(book.job_state(a, 230).restarts == 1);
  // An old generation's "done" does not count; the current one's does.
  rep["reason"] = "done";
  book.apply(make_report("t4-0", "a", 200, 300, rep));
  CHECK(!a.done_reported);
  rep["round"] = 2;
  book.apply(make_report("t4-0", "a", 300, 400, rep));
  CHECK(a.done_reported);
}

// Found by fuzz/report_lines: a worker's world_size, local_bsz, nodes or step far out of
// range (1e300) was cast to int / int64 (undefined behaviour); such numbers are ignored.
TEST_CASE("a report's numbers out of range are ignored, not cast", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  json rep = {{"type", "report"},    {"round", 1},       {"step", 1e300},
              {"progress", 2.0},     {"step_time", 0.2}, {"local_bsz", 16},
              {"world_size", 1e300}, {"nodes", 1e300},   {"gpu_type", "t4"}};
  CHECK(book.apply(make_report("t4-0", "a", 0, 100, rep)));
  rep["world_size"] = 2;
  rep["local_bsz"] = -1e300;
  CHECK(book.apply(make_report("t4-0", "a", 100, 200, rep)));
  rep["local_bsz"] = 16;
  rep["step_time"] = 1e300;
  CHECK(book.apply(make_report("t4-0", "a", 200, 300, rep)));
  const BookJob& a = *book.find("a");
  CHECK(a.observations.empty());
  CHECK(a.step == 0);
  CHECK(a.reports == 3);
  rep["step_time"] = 0.2;
  rep["step"] = 7;
  CHECK(book.apply(make_report("t4-0", "a", 300, 400, rep)));
  REQUIRE(a.observations.size() == 1);
  CHECK(a.observations[0].point.nodes == 1);
  CHECK(a.step == 7);
  CHECK(a.progress == 2);
  // Progress past what any counter holds is not a position either.
  rep["progress"] = 1e300;
  rep["step"] = 8;
  CHECK(book.apply(make_report("t4-0", "a", 400, 500, rep)));
  CHECK(a.progress == 2);
  CHECK(a.step == 8);
  rep["progress"] = -5.0;
  CHECK(book.apply(make_report("t4-0", "a", 500, 600, rep)));
  CHECK(a.progress == 2);
}

TEST_CASE("a resize keeps the generation; a start behind the last step is noticed", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  const BookJob& a = *book.find("a");
  json rep = {
      {"type", "report"}, {"round", 1}, {"step", 500}, {"progress", 400.0}, {"reason", "interval"}};
  book.apply(make_report("t4-0", "a", 0, 100, rep));
  // Only the batch changed: sia-run resized it in place.
  book.apply(round_record(2, 220, json::array({placed("a", "t4-0", {0, 1}, 32)})));
  book.apply(delivered("t4-0", "a", "resize", 1));
  CHECK(a.starts == 1);
  CHECK(a.generation == 1);
  CHECK_FALSE(a.restoring);
  CHECK(book.job_state(a, 230).restarts == 0);

  // Moved to another node whose start found no checkpoint: the node says so, and the
  // first report of the new generation is the job's real position.
  book.apply(round_record(3, 280, json::array({placed("a", "t4-1", {0})})));
  json d = delivered("t4-1", "a", "start", 4);
  d["actions"][0]["warning"] = "no checkpoint in /ck/a (the job was at step 500)";
  book.apply(d);
  CHECK(a.notice == "no checkpoint in /ck/a (the job was at step 500)");
  rep["round"] = 4;
  rep["step"] = 20;
  rep["progress"] = 15.0;
  book.apply(make_report("t4-1", "a", 0, 100, rep));
  CHECK(a.step == 20);
  CHECK(a.progress == 15);
  CHECK(a.lost_steps == 480);
  CHECK(a.notice.find("resumed at step 20, not 500: 480 steps lost") != std::string::npos);
  // A straggler of the old generation does not move it back up.
  rep["round"] = 1;
  rep["step"] = 510;
  book.apply(make_report("t4-0", "a", 100, 200, rep));
  CHECK(a.step == 20);  // the current generation has spoken
  JobBook copy = JobBook::from_json(book.to_json(), "snapshot");
  CHECK(copy.find("a")->lost_steps == 480);
  CHECK(copy.find("a")->notice == a.notice);

  BookJob j;
  j.spec = ct::spec("a");
  j.step = 77;
  json nj = node_job_json(copy, j, "/nfs/ck");
  CHECK(nj["state"]["step"] == 77);
  CHECK(nj["state"]["checkpoint_dir"] == "/nfs/ck/a");
  j.step = 0;
  CHECK_FALSE(node_job_json(copy, j, "").contains("state"));
}

TEST_CASE("an ended job is never placed again", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a"), ct::spec("b")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0})})));
  CHECK(book.apply(make_job_ended("a", Lifecycle::finished, "done", 0, 170)));
  CHECK_FALSE(book.apply(make_job_ended("a", Lifecycle::failed, "again", 1, 171)));
  CHECK(book.find("a")->state == Lifecycle::finished);
  CHECK(book.find("a")->exit_status == 0);
  // Even a round record that (wrongly) places it leaves it ended and unplaced.
  book.apply(
      round_record(2, 220, json::array({placed("a", "t4-0", {0}), placed("b", "t4-1", {0})})));
  CHECK(book.find("a")->state == Lifecycle::finished);
  CHECK(!book.find("a")->placed);
  CHECK(book.find("b")->state == Lifecycle::running);
  CHECK(book.active().size() == 1);
  // A cancelled job too.
  CHECK(book.apply(make_job_request(JobRequest::cancel, "g", "local:you", 230, {"b"})));
  CHECK(book.find("b")->state == Lifecycle::cancelled);
  CHECK(book.find("b")->reason == "cancelled by local:you");
  CHECK_FALSE(book.apply(make_job_request(JobRequest::cancel, "h", "local:you", 231, {"b"})));
  // A name is never taken twice.
  CHECK_FALSE(book.apply(make_submit("i", "local:me", 240, {ct::spec("a")})));
  CHECK(book.find("a")->submit_time == 100);
}

TEST_CASE("the book round-trips through its snapshot form", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  book.apply(make_report("t4-0", "a", 0, 50,
                         {{"type", "report"},
                          {"round", 1},
                          {"step", 3},
                          {"step_time", 0.1},
                          {"local_bsz", 8},
                          {"world_size", 2},
                          {"gpu_type", "t4"}}));
  book.apply(make_node_seen("t4-0", true, "", 160));
  book.apply(make_rejected("g", "local:x", 170, {"zz"}, "bad"));
  json j = book.to_json();
  JobBook back = JobBook::from_json(j, "snapshot.json");
  CHECK(back.to_json() == j);
  CHECK(back.find("a")->observations.size() == 1);
  CHECK(back.inbox_seen("f"));
  CHECK(back.rejections().size() == 1);
}

TEST_CASE("the silence clock starts with a start its node confirmed", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0})})));
  const BookJob& a = *book.find("a");
  CHECK(silent_for(a, 10000) == 0);  // placed, but no node said it started it
  // A RunPlan whose action carries a warning keeps it in the delivered record.
  json plan = {
      {"actions",
       {{{"job", "a"}, {"action", "start"}, {"round", 1}, {"warning", "no checkpoint in /ck/a"}}}}};
  json d = make_delivered(1, "t4-0", true, "", plan);
  CHECK(d["actions"][0]["generation"] == 1);
  CHECK(d["actions"][0]["warning"] == "no checkpoint in /ck/a");
  CHECK(make_delivered(1, "t4-0", false, "boom", nullptr)["actions"].empty());
  book.apply(d);
  CHECK(silent_for(a, 200) == 40);  // since the round that started it
  json rep = {{"type", "report"}, {"round", 1}, {"step", 3}};
  json r = make_report("t4-0", "a", 0, 10, rep);
  r["time"] = 190;
  book.apply(r);
  CHECK(silent_for(a, 200) == 10);  // since its last report
}

TEST_CASE("rho: estimated from the rounds, measured when the job finishes", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a"), ct::spec("b")}));
  json r1 = round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})}));
  r1["fairness"] = {{"units", 2},
                    {"jobs", {{"a", {{"t_sh", 600.0}, {"t_id", 400.0}}}, {"b", json::object()}}},
                    {"apps", json::object()}};
  book.apply(r1);
  json r2 = round_record(2, 220, json::array({placed("a", "t4-0", {0, 1})}));
  r2["fairness"] = {{"units", 1},
                    {"jobs", {{"a", {{"t_sh", 500.0}, {"t_id", 400.0}}}}},
                    {"apps", json::object()}};
  book.apply(r2);
  const BookJob& a = *book.find("a");
  CHECK(a.fair.rounds == 2);
  CHECK(a.fair.contention_sum == 3);  // N_avg 1.5
  CHECK(a.fair.n_avg_with(3) == Approx(2));
  REQUIRE(job_rho(a));
  CHECK(*job_rho(a) == Approx(1.25));     // the last estimate
  CHECK_FALSE(job_rho(*book.find("b")));  // scheduled without a figure
  CHECK(book.find("b")->fair.rounds == 1);
  // The snapshot keeps it.
  JobBook back = JobBook::from_json(book.to_json(), "snapshot.json");
  CHECK(back.find("a")->fair.t_sh == 500);
  CHECK(back.find("a")->fair.contention_sum == 3);
  // Finished at 700: measured, (700 - 100) / 400.
  book.apply(make_job_ended("a", Lifecycle::finished, "done", 0, 700));
  CHECK(*job_rho(a) == Approx(1.5));
  book.apply(make_job_ended("b", Lifecycle::failed, "boom", 1, 700));
  CHECK_FALSE(job_rho(*book.find("b")));
  // A bad fairness field changes nothing.
  JobBook other;
  other.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  json bad = round_record(1, 160, json::array());
  bad["fairness"] = {{"units", -1}, {"jobs", {{"a", {{"t_sh", 1.0}, {"t_id", 1.0}}}}}};
  other.apply(bad);
  CHECK(other.find("a")->fair.rounds == 0);
}

TEST_CASE("the work a job needs follows the fraction its workers report", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  CHECK(book.job_state(*book.find("a"), 200).target_progress == 0);  // the catalog's
  book.apply(make_report(
      "t4-0", "a", 0, 50,
      {{"type", "report"}, {"round", 1}, {"step", 30}, {"progress", 12.0}, {"fraction", 0.25}}));
  CHECK(book.job_state(*book.find("a"), 200).target_progress == Approx(48));
}

TEST_CASE("a first report that comes before its start is confirmed counts then", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0})})));
  // The daemon journals the new workers' first report while it waits for the node's ACK.
  json r = make_report("t4-0", "a", 0, 10, {{"type", "report"}, {"round", 1}, {"step", 7}});
  r["time"] = 165;
  book.apply(r);
  book.apply(delivered("t4-0", "a", "start", 1));
  const BookJob& a = *book.find("a");
  CHECK_FALSE(a.restoring);  // it has reported: not "no report from it yet"
  CHECK(a.step == 7);
  CHECK(a.last_report_time == 165);
  CHECK(silent_for(a, 170) == 5);
  // A restart on the same node: the new generation's first report, again before the ACK.
  book.apply(round_record(2, 220, json::array({placed("a", "t4-0", {0, 1})})));
  r = make_report("t4-0", "a", 10, 20, {{"type", "report"}, {"round", 2}, {"step", 9}});
  r["time"] = 225;
  book.apply(r);
  book.apply(delivered("t4-0", "a", "restart", 2));
  CHECK_FALSE(a.restoring);
  CHECK(a.step == 9);
  CHECK(a.last_report_time == 225);
  // The snapshot keeps where the last report came from.
  JobBook back = JobBook::from_json(book.to_json(), "snapshot.json");
  CHECK(back.find("a")->last_report_node == "t4-0");
  CHECK(back.find("a")->last_report_at == 225);
}

TEST_CASE("a failed job's last reports still say the step it reached", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a"), ct::spec("b")}));
  book.apply(
      round_record(1, 160, json::array({placed("a", "t4-0", {0}), placed("b", "t4-1", {0})})));
  book.apply(make_job_ended("a", Lifecycle::failed, "rank 0 failed", 1, 200));
  book.apply(make_job_ended("b", Lifecycle::cancelled, "cancelled", std::nullopt, 200));
  const json rep = {{"type", "report"}, {"round", 1}, {"step", 42}, {"progress", 3.0}};
  book.apply(make_report("t4-0", "a", 0, 10, rep));
  book.apply(make_report("t4-1", "b", 0, 10, rep));
  CHECK(book.find("a")->step == 42);
  CHECK(book.find("a")->progress == 3.0);
  CHECK(book.find("b")->step == 0);  // a cancelled job's are ignored
  // Lower steps never move it back.
  book.apply(make_report("t4-0", "a", 10, 20, {{"type", "report"}, {"round", 1}, {"step", 5}}));
  CHECK(book.find("a")->step == 42);
}

TEST_CASE("rho: the measured rate, the estimate's basis, and never before the job's age",
          "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  json r1 = round_record(1, 160, json::array({placed("a", "t4-0", {0})}));
  r1["fairness"] = {{"units", 1},
                    {"jobs", {{"a", {{"t_sh", 300.0}, {"t_id", 200.0}, {"measured", true}}}}},
                    {"apps", json::object()}};
  book.apply(r1);
  const BookJob& a = *book.find("a");
  CHECK(a.fair.measured);
  CHECK(*job_rho(a, 0) == Approx(1.5));
  CHECK(*job_rho(a, 350) == Approx(1.5));  // age 250 < T_sh 300: 300 / 200 stands
  CHECK(*job_rho(a, 600) == Approx(2.5));  // age 500 > T_sh 300: 500 / 200
  // Measured rate: none before the current generation reported a step time.
  CHECK_FALSE(measured_rate(a));
  book.apply(delivered("t4-0", "a", "start", 1));
  json rep = {{"type", "report"}, {"round", 1},      {"step", 10},      {"progress", 5.0},
              {"step_time", 0.5}, {"local_bsz", 16}, {"world_size", 1}, {"gpu_type", "t4"}};
  book.apply(make_report("t4-0", "a", 0, 10, rep));
  // One report: over its whole life, 5 / 10 per step, 0.5 s a step: 1 per second.
  REQUIRE(measured_rate(a));
  CHECK(*measured_rate(a) == Approx(1.0));
  rep["step"] = 30;
  rep["progress"] = 25.0;  // 20 over 20 steps since the generation's first report
  rep["step_time"] = 0.25;
  book.apply(make_report("t4-0", "a", 10, 20, rep));
  CHECK(*measured_rate(a) == Approx(4.0));
  JobBook back = JobBook::from_json(book.to_json(), "snapshot.json");
  CHECK(back.find("a")->fair.measured);
  CHECK(back.find("a")->gen_step == 10);
}

TEST_CASE("a reason names who asked, never their key", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(make_job_request(JobRequest::cancel, "g", "client:bob (key rq:9F+x}a&Z)", 120, {"a"}));
  CHECK(book.find("a")->reason == "cancelled by client:bob");
  CHECK(identity_name("client:bob (key k)") == "client:bob");
  CHECK(identity_name("local:me") == "local:me");
}

TEST_CASE("a report without timings keeps the measured rate", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  json rep = {{"type", "report"}, {"round", 1},      {"step", 10},      {"progress", 5.0},
              {"step_time", 0.5}, {"local_bsz", 16}, {"world_size", 1}, {"gpu_type", "t4"}};
  book.apply(make_report("t4-0", "a", 0, 10, rep));
  rep.erase("step_time");  // a batch change's report: no timings
  rep["step"] = 20;
  rep["progress"] = 10.0;
  rep["reason"] = "batch";
  book.apply(make_report("t4-0", "a", 10, 20, rep));
  REQUIRE(measured_rate(*book.find("a")));
  CHECK(*measured_rate(*book.find("a")) == Approx(1.0));  // 0.5 per step, 0.5 s a step
}

TEST_CASE("just after a batch change the measured rate scales the nearest step time", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0}, 16)})));
  book.apply(delivered("t4-0", "a", "start", 1));
  json rep = {{"type", "report"}, {"round", 1},      {"step", 10},      {"progress", 5.0},
              {"step_time", 0.5}, {"local_bsz", 16}, {"world_size", 1}, {"gpu_type", "t4"}};
  book.apply(make_report("t4-0", "a", 0, 10, rep));
  // The batch doubles in place; the first report at 32 has no timings.
  book.apply(round_record(2, 220, json::array({placed("a", "t4-0", {0}, 32)})));
  book.apply(delivered("t4-0", "a", "resize", 1));
  rep.erase("step_time");
  rep["local_bsz"] = 32;
  rep["reason"] = "batch";
  rep["step"] = 12;
  rep["progress"] = 6.0;
  book.apply(make_report("t4-0", "a", 10, 20, rep));
  REQUIRE(measured_rate(*book.find("a")));
  CHECK(*measured_rate(*book.find("a")) == Approx(0.5));  // 0.5 per step, 1 s a step at 32
}

TEST_CASE("a job whose node refuses its delivery is undelivered, not running", "[book]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  json failed = delivered("t4-0", "a", "start", 1);
  failed["ok"] = false;
  failed["error"] = "sia-run: error: placement.json: bad (exit status 65)";
  failed["actions"] = json::array();
  book.apply(failed);
  auto row = [&] { return job_status_list(book, {}, {"a"}, 200, 90)["data"]["jobs"][0]; };
  CHECK(row()["state"] == "running");
  CHECK(row()["reason_code"] == "undelivered");
  CHECK(row()["reason"] ==
        "not started: node t4-0 refused it 40s ago and since: sia-run: error: placement.json: "
        "bad (exit status 65)");
  CHECK(undelivered_for(book, *book.find("a"), 200) == 40);
  book.apply(delivered("t4-0", "a", "start", 1));
  CHECK(row()["reason_code"] == "restoring");
  CHECK_FALSE(undelivered_for(book, *book.find("a"), 200));
}

TEST_CASE("a job-peer-lost record is a new attempt, counted once, kept and handed to nodes",
          "[book][peer]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  json rep = {
      {"type", "report"}, {"round", 1}, {"step", 500}, {"progress", 400.0}, {"reason", "interval"}};
  book.apply(make_report("t4-0", "a", 0, 100, rep));
  const BookJob& a = *book.find("a");
  CHECK_FALSE(node_job_json(book, a, "")["state"].contains("attempt"));  // none: absent
  CHECK(book.apply(make_job_peer_lost("a", "t4-0", 1, 1, 170)));
  CHECK_FALSE(book.apply(make_job_peer_lost("a", "t4-0", 1, 1, 170)));  // the same again
  CHECK(a.peer_restarts == 1);
  CHECK(a.peer_lost_generation == 1);
  CHECK(a.notice ==
        "its ranks lost their peers on every node while all were up (round 1, reported by "
        "t4-0): restarted from its checkpoint (attempt 1)");
  CHECK(node_job_json(book, a, "")["state"]["attempt"] == 1);
  // The new attempt resumes behind the last report: why it started again stays said.
  book.apply(delivered("t4-0", "a", "start", 2));
  rep["round"] = 2;
  rep["step"] = 400;
  book.apply(make_report("t4-0", "a", 100, 200, rep));
  CHECK(a.notice.find("resumed at step 400, not 500: 100 steps lost (its ranks lost their "
                      "peers") != std::string::npos);
  JobBook back = JobBook::from_json(book.to_json(), "snapshot.json");
  CHECK(back.find("a")->peer_restarts == 1);
  CHECK(back.find("a")->peer_lost_generation == 1);
}

TEST_CASE("restarts for lost peers count again from 0 once the job trains past the loss",
          "[book][peer]") {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a")}));
  book.apply(round_record(1, 160, json::array({placed("a", "t4-0", {0, 1})})));
  book.apply(delivered("t4-0", "a", "start", 1));
  auto report = [&](int generation, std::int64_t step, std::int64_t offset) {
    json rep = {{"type", "report"}, {"round", generation}, {"step", step}, {"reason", "interval"}};
    book.apply(make_report("t4-0", "a", offset, 100 + offset, rep));
  };
  report(1, 500, 0);
  const BookJob& a = *book.find("a");
  book.apply(make_job_peer_lost("a", "t4-0", 1, 1, 170));
  CHECK(a.peer_retries_used == 1);
  CHECK(a.peer_lost_step == 500);
  // The new attempt resumes behind, then reaches where it was: not yet past the loss.
  book.apply(delivered("t4-0", "a", "start", 2));
  report(2, 400, 100);
  report(2, 500, 200);
  CHECK(a.peer_retries_used == 1);
  // One step past it: the cut is behind the job; its attempt stays.
  report(2, 501, 300);
  CHECK(a.peer_retries_used == 0);
  CHECK(a.peer_restarts == 1);
  CHECK(node_job_json(book, a, "")["state"]["attempt"] == 1);
  // Lost again, days later: it counts as the first since that progress.
  book.apply(make_job_peer_lost("a", "t4-0", 2, 2, 900));
  CHECK(a.peer_retries_used == 1);
  CHECK(a.peer_restarts == 2);
  CHECK(node_job_json(book, a, "")["state"]["attempt"] == 2);
  // The generation whose peers were lost reporting more is no progress since.
  report(2, 900, 400);
  CHECK(a.peer_retries_used == 1);
  // Kept in the snapshot; one from before the reset counts every restart, from its step.
  json snap = book.to_json();
  CHECK(JobBook::from_json(snap, "snapshot.json").find("a")->peer_retries_used == 1);
  CHECK(JobBook::from_json(snap, "snapshot.json").find("a")->peer_lost_step == 501);
  for (auto& j : snap["jobs"]) {
    j["peer_restarts"] = 3;
    j.erase("peer_retries_used");
    j.erase("peer_lost_step");
  }
  JobBook old = JobBook::from_json(snap, "snapshot.json");
  CHECK(old.find("a")->peer_retries_used == 3);
  CHECK(old.find("a")->peer_lost_step == old.find("a")->step);
}
