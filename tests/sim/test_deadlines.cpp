// Deadlines in the simulator (issue 34): the workload fields, --deadlines' draw, the
// admission, the summary's figures and a simulation with guaranteed jobs.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/deadline_transform.hpp"
#include "sim/deadlines.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"

#include "test_util.hpp"

using namespace sia;

namespace {

const char* const kHeader = "name,time,application,num_replicas,batch_size,deadline,class\n";

std::vector<JobSpec> csv(const Catalog& c, const std::string& rows) {
  return parse_workload_csv(kHeader + rows, "w.csv", c);
}

std::pair<int, std::string> csv_error(const Catalog& c, const std::string& rows) {
  return test::error_of([&] { csv(c, rows); });
}

std::pair<int, std::string> jsonl_error(const Catalog& c, const std::string& text) {
  return test::error_of([&] { parse_workload(text, "w.jsonl", c); });
}

}  // namespace

TEST_CASE("workload deadline and class fields: CSV", "[deadline]") {
  Catalog c(test::catalog_dir());
  auto w = csv(c,
               "a,10,cifar10,4,2048,5000,guaranteed\nb,20,cifar10,4,2048,,\n"
               "d,30,cifar10,4,2048,900,best_effort\n");
  REQUIRE(w.size() == 3);
  CHECK(w[0].job_class == JobClass::guaranteed);
  CHECK(*w[0].deadline == 5000);
  CHECK(w[1].job_class == JobClass::best_effort);
  CHECK_FALSE(w[1].deadline);
  CHECK(w[2].job_class == JobClass::best_effort);
  CHECK(*w[2].deadline == 900);
  // Without the columns: no deadlines at all.
  auto plain = parse_workload_csv(
      "name,time,application,num_replicas,batch_size\na,1,cifar10,1,32\n", "p.csv", c);
  CHECK_FALSE(has_deadlines(plain));
  CHECK(has_deadlines(w));

  CHECK(csv_error(c, "a,10,cifar10,4,2048,5000,gold\n") ==
        std::make_pair(65, std::string("w.csv:2: column class: expected guaranteed or "
                                       "best_effort, got \"gold\"")));
  CHECK(csv_error(c, "a,10,cifar10,4,2048,,guaranteed\n") ==
        std::make_pair(65, std::string("w.csv:2: column class: a guaranteed job needs a "
                                       "deadline")));
  auto early = csv_error(c, "a,10,cifar10,4,2048,5,guaranteed\n");
  CHECK(early.first == 65);
  CHECK(early.second.rfind("w.csv:2: column deadline: expected seconds after the trace's "
                           "start, after the submission (10)",
                           0) == 0);
  CHECK(csv_error(c, "a,10,cifar10,4,2048,soon,\n").second ==
        "w.csv:2: column deadline: expected a number, got \"soon\"");
}

TEST_CASE("workload deadline and class fields: JSON Lines", "[deadline]") {
  Catalog c(test::catalog_dir());
  auto w = parse_workload(
      "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {\"name\": \"a\", \"model\": "
      "\"cifar10\", "
      "\"submit_time\": 5, \"deadline\": 7200, \"class\": \"guaranteed\"}}\n"
      "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {\"name\": \"b\", \"model\": "
      "\"cifar10\", \"submit_time\": 10}}\n",
      "w.jsonl", c);
  REQUIRE(w.size() == 2);
  CHECK(w[0].job_class == JobClass::guaranteed);
  CHECK(*w[0].deadline == 7200);
  CHECK_FALSE(w[1].deadline);
  auto bad_class = jsonl_error(
      c,
      "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {\"name\": \"a\", \"model\": "
      "\"cifar10\", \"deadline\": 10, \"class\": \"gold\"}}\n");
  CHECK(bad_class.first == 65);
  CHECK(bad_class.second.find("class") != std::string::npos);
  CHECK(bad_class.second.find("expected one of \"guaranteed\", \"best_effort\"") !=
        std::string::npos);
  auto no_deadline = jsonl_error(c,
                                 "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": "
                                 "{\"name\": \"a\", \"model\": \"cifar10\", "
                                 "\"class\": \"guaranteed\"}}\n");
  CHECK(no_deadline.first == 65);
  CHECK(no_deadline.second.find("a guaranteed job needs a deadline") != std::string::npos);
  auto past = jsonl_error(
      c,
      "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {\"name\": \"a\", \"model\": "
      "\"cifar10\", \"submit_time\": 50, \"deadline\": 20}}\n");
  CHECK(past.first == 65);
  CHECK(past.second.find("deadline") != std::string::npos);
  // The other keys are still checked.
  CHECK(jsonl_error(c,
                    "{\"apiVersion\": \"sia/v1\", \"kind\": \"JobSpec\", \"data\": {\"name\": "
                    "\"a\", \"model\": "
                    "\"cifar10\", \"deadlin\": 20}}\n")
            .second.find("unknown key") != std::string::npos);
}

TEST_CASE("the deadlines transform: SHARE[:SEED]", "[deadline]") {
  CHECK(parse_deadline_draw("0.3").share == 0.3);
  CHECK(parse_deadline_draw("0.3").seed == 1);
  CHECK(parse_deadline_draw("1:42").seed == 42);
  for (const char* bad : {"", "x", "1.5", "-0.1", "0.3:", "0.3:x", "0.3:-1", "nan"}) {
    INFO(bad);
    auto e = test::error_of([&] { parse_deadline_draw(bad); });
    CHECK(e.first == 64);
    CHECK(e.second.rfind("--deadlines: expected SHARE[:SEED]", 0) == 0);
  }
  for (int i = 0; i < 200; ++i) {
    const double f = deadline_factor("job-" + std::to_string(i), 3);
    CHECK(f >= 0.5);
    CHECK(f < 2.0);
  }
}

TEST_CASE("the ideal time on a fair share, from the catalog", "[deadline]") {
  Catalog c(test::catalog_dir());
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  JobSpec s;
  s.name = "a";
  s.model = "cifar10";
  const ModelInfo& m = c.get("cifar10");
  // By hand: the fastest type at its share (capped at the measured GPUs).
  auto by_hand = [&](int n) {
    double best = INFINITY;
    for (const auto& t : cl.types) {
      const ModelGpu* g = m.gpu(t.name);
      if (!g) continue;
      double share = std::min(static_cast<double>(t.capacity()) / n,
                              static_cast<double>(g->max_profiled_nodes * t.gpus_per_node));
      best = std::min(best, m.target_progress() * m.init_batch_size * m.slowdown /
                                (share * g->single_gpu_throughput()));
    }
    return best;
  };
  CHECK(ideal_fair_share_seconds(s, m, cl, 1) == Approx(by_hand(1)));
  CHECK(ideal_fair_share_seconds(s, m, cl, 10) == Approx(by_hand(10)));
  CHECK(ideal_fair_share_seconds(s, m, cl, 40) > ideal_fair_share_seconds(s, m, cl, 10));
  s.allowed_gpu_types = {"no-such-type"};
  CHECK(test::error_of([&] { ideal_fair_share_seconds(s, m, cl, 1); }).first == 65);
}

TEST_CASE("assign_deadlines: a seeded share made guaranteed", "[deadline]") {
  Catalog c(test::catalog_dir());
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  std::string rows = "name,time,application,num_replicas,batch_size\n";
  for (int i = 0; i < 300; ++i) {
    rows += "j" + std::to_string(i) + "," + std::to_string(60 * i) + ",cifar10,4,2048\n";
  }
  const auto jobs = parse_workload_csv(rows, "w.csv", c);
  auto none = jobs;
  assign_deadlines(none, {0, 1}, cl, c);
  CHECK_FALSE(has_deadlines(none));
  auto a = jobs, b = jobs;
  assign_deadlines(a, {0.3, 5}, cl, c);
  assign_deadlines(b, {0.6, 5}, cl, c);
  int n = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (a[i].job_class != JobClass::guaranteed) continue;
    ++n;
    REQUIRE(a[i].deadline);
    CHECK(b[i].job_class == JobClass::guaranteed);  // drawn at 0.3: drawn at 0.6
    CHECK(*b[i].deadline == *a[i].deadline);
    const double left = *a[i].deadline - a[i].submit_time;
    CHECK(left > 0);
  }
  CHECK(n > 60);  // 300 draws at 0.3: about 90
  CHECK(n < 120);
  // The first job is alone in its hour: its deadline is f x its ideal time on n = 1.
  auto all = jobs;
  assign_deadlines(all, {1, 5}, cl, c);
  const double ideal = ideal_fair_share_seconds(all[0], c.get("cifar10"), cl, 1);
  CHECK(*all[0].deadline == Approx(deadline_factor("j0", 5) * ideal));
}

TEST_CASE("the summary's deadline figures", "[deadline]") {
  auto job = [](std::optional<JobClass> k, std::optional<double> deadline, bool admitted, bool met,
                double jct, std::optional<double> rho) {
    JobResult r;
    r.job_class = k;
    r.deadline = deadline;
    r.admitted = admitted;
    r.deadline_met = met;
    r.jct = jct;
    r.rho = rho;
    r.gpu_seconds = {3600, 0};
    return r;
  };
  SimSummary none;
  summarize_deadlines({job(std::nullopt, std::nullopt, false, false, 10, 1.0)}, none);
  CHECK_FALSE(none.deadlines);
  SimSummary s;
  summarize_deadlines({job(JobClass::guaranteed, 100, true, true, 50, 1.0),
                       job(JobClass::guaranteed, 100, true, false, 150, 2.0),
                       job(JobClass::guaranteed, 100, false, false, 300, 1.5),  // refused
                       job(JobClass::best_effort, std::nullopt, false, false, 100, 0.5)},
                      s);
  CHECK(s.deadlines);
  CHECK(s.guaranteed == 3);
  CHECK(s.admitted == 2);
  CHECK(s.admitted_fraction == Approx(2.0 / 3));
  CHECK(s.guaranteed_met_fraction == Approx(0.5));
  CHECK(s.best_effort_jobs == 2);
  CHECK(s.best_effort_with_deadline == 1);
  CHECK(s.best_effort_met_fraction == 0);
  CHECK(s.best_effort_avg_jct == Approx(200));
  CHECK(s.best_effort_mean_rho == Approx(1.0));
  CHECK(s.best_effort_worst_rho == Approx(1.5));
  CHECK(s.gpu_hours == Approx(4));
}

TEST_CASE("a simulation with guaranteed jobs admits, runs and reports them", "[deadline]") {
  Catalog c(test::catalog_dir());
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  // A generous deadline and an impossible one.
  const auto w = csv(c,
                     "cifar10-0,0,cifar10,4,2048,200000,guaranteed\n"
                     "bert-1,30,bert,8,384,,\n"
                     "cifar10-2,95,cifar10,4,2048,100,guaranteed\n"
                     "deepspeech2-3,200,deepspeech2,6,320,400000,\n");
  for (const char* policy : {"sia", "edf", "elasticflow"}) {
    INFO(policy);
    SimOptions o;
    o.policy = policy;
    o.fairness = false;
    const SimResult r = simulate(cl, c, w, o);
    REQUIRE(r.jobs.size() == 4);
    const JobResult& g = r.jobs[0];
    REQUIRE(g.job_class);
    CHECK(*g.job_class == JobClass::guaranteed);
    CHECK(g.admitted);
    CHECK(g.deadline_met);
    CHECK_FALSE(r.jobs[2].admitted);  // 100 s after the trace's start: out of reach
    CHECK(*r.jobs[1].job_class == JobClass::best_effort);
    CHECK(r.summary.deadlines);
    CHECK(r.summary.guaranteed == 2);
    CHECK(r.summary.admitted == 1);
    CHECK(r.summary.guaranteed_met_fraction == 1);
    CHECK(r.summary.best_effort_with_deadline == 2);  // the refused one, deepspeech2-3
    CHECK(r.summary.gpu_hours > 0);
  }
}

TEST_CASE("the simulator's admission counts the GPUs reservations hold before the deadline",
          "[deadline]") {
  Catalog c(test::catalog_dir());
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  const auto w = csv(c, "cifar10-0,0,cifar10,4,2048,200000,guaranteed\n");
  // Every GPU held from 0 to 5000 s: within the deadline, so nothing is left to admit on;
  // the job runs best-effort once they are lent back.
  std::vector<Reservation> all;
  for (const auto& t : cl.types) {
    Reservation r;
    r.gpu_type = t.name;
    r.gpus = t.capacity();
    r.steps = {{0, t.capacity()}, {5000, 0}};
    all.push_back(r);
  }
  SimOptions o;
  o.policy = "sia";
  o.fairness = false;
  o.reservations = all;
  const SimResult held = simulate(cl, c, w, o);
  REQUIRE(held.jobs.size() == 1);
  CHECK_FALSE(held.jobs[0].admitted);
  CHECK(held.jobs[0].completion > 5000);
  // Held only after the deadline: admitted as without reservations.
  for (auto& r : all) r.steps = {{0, 0}, {300000, r.gpus}};
  o.reservations = all;
  const SimResult later = simulate(cl, c, w, o);
  CHECK(later.jobs[0].admitted);
  CHECK(later.jobs[0].deadline_met);
}
