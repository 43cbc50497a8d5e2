#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <thread>
#include "sim/fairness.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"

#include "test_util.hpp"

using namespace sia;

namespace {

std::vector<JobSpec> small_workload(const Catalog& c) {
  return parse_workload_csv(
      "name,time,application,num_replicas,batch_size\n"
      "cifar10-0,0,cifar10,4,2048\n"
      "bert-1,30,bert,8,384\n"
      "cifar10-2,95,cifar10,4,2048\n"
      "deepspeech2-3,200,deepspeech2,6,320\n",
      "small.csv", c);
}

// The small workload on the 64-GPU heterogeneous cluster.
struct Small {
  Catalog c{test::catalog_dir()};
  Cluster cl = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  std::vector<JobSpec> w = small_workload(c);
};

}  // namespace

TEST_CASE("workload rows are checked, errors name the line", "[workload]") {
  Catalog c(test::catalog_dir());
  auto w = small_workload(c);
  REQUIRE(w.size() == 4);
  CHECK(w[1].submit_time == 30);
  CHECK(w[1].gpus == 8);
  CHECK(w[1].batch_size == 384);
  auto bad = [&](const std::string& row) {
    return test::error_of([&] {
      parse_workload_csv("name,time,application,num_replicas,batch_size\n" + row, "w.csv", c);
    });
  };
  CHECK(bad("a,1,resnet,1,32\n")
            .second.rfind("w.csv:2: column application: unknown model \"resnet\"", 0) == 0);
  CHECK(bad("a,x,cifar10,1,32\n").second == "w.csv:2: column time: expected a number, got \"x\"");
  CHECK(bad("a,1,cifar10,0,32\n").second ==
        "w.csv:2: column num_replicas: expected a positive GPU count");
  CHECK(bad("a,1,cifar10,1\n").second == "w.csv:2: expected 5 columns, got 4");
  CHECK(bad("a,1,cifar10,1,32\na,2,cifar10,1,32\n").second ==
        "w.csv:3: column name: duplicate job \"a\"");
  CHECK(bad("a,-1,cifar10,1,32\n").first == 65);
}

TEST_CASE_METHOD(Small, "a small workload runs to completion, deterministically", "[simulator]") {
  for (bool reference : {false, true}) {
    SimOptions o;
    o.compat = reference ? Compat::reference : Compat::standard;
    o.record_rounds = true;
    SimResult a = simulate(cl, c, w, o);
    SimResult b = simulate(cl, c, w, o);
    INFO("reference " << reference);
    REQUIRE(a.jobs.size() == 4);
    for (std::size_t i = 0; i < a.jobs.size(); ++i) {
      CHECK(a.jobs[i].jct == b.jobs[i].jct);
      CHECK(a.jobs[i].restarts == b.jobs[i].restarts);
      CHECK(a.jobs[i].jct > 0);
      CHECK(a.jobs[i].completion == std::floor(a.jobs[i].completion));
      REQUIRE(a.jobs[i].rho);
      CHECK(*a.jobs[i].rho > 0);
    }
    // The first decision happens at t = round: nothing runs before.
    CHECK(a.rounds.front().t == 60);
    // cifar10-2, submitted at 95 s, is first scheduled at 120 s: its JCT includes 25 s.
    CHECK(a.jobs[2].jct >= 25 + 50);
    CHECK(a.summary.jobs == 4);
    CHECK(a.summary.makespan == Approx(std::max({a.jobs[0].completion, a.jobs[1].completion,
                                                 a.jobs[2].completion, a.jobs[3].completion})));
  }
}

TEST_CASE_METHOD(
    Small, "isolated runs started during the simulation give the figures of runs made after it",
    "[simulator][fairness]") {
  for (bool reference : {false, true}) {
    SimOptions o;
    o.compat = reference ? Compat::reference : Compat::standard;
    o.round = 60;  // as simulate() would resolve it: add_finish_time_fairness takes it as is
    SimResult during = simulate(cl, c, w, o);  // runs queued as each job finishes
    SimOptions none = o;
    none.fairness = false;
    SimResult after = simulate(cl, c, w, none);
    add_finish_time_fairness(after, cl, c, w, o);  // all runs made here
    INFO("reference " << reference);
    REQUIRE(during.jobs.size() == after.jobs.size());
    for (std::size_t i = 0; i < during.jobs.size(); ++i) {
      REQUIRE(during.jobs[i].rho);
      REQUIRE(after.jobs[i].rho);
      CHECK(*during.jobs[i].rho == *after.jobs[i].rho);
      CHECK(*during.jobs[i].isolated_jct == *after.jobs[i].isolated_jct);
    }
  }
}

TEST_CASE_METHOD(Small, "isolated runs made ahead for long jobs change no figure",
                 "[simulator][fairness]") {
  // An ImageNet job runs for hours: its runs are made ahead while it is active (after 30
  // rounds, if this machine has a core for a worker) and must give what runs made after
  // the simulation give.
  std::vector<JobSpec> long_w = parse_workload_csv(
      "name,time,application,num_replicas,batch_size\n"
      "imagenet-0,0,imagenet,10,1600\n"
      "cifar10-1,30,cifar10,4,2048\n"
      "bert-2,600,bert,8,384\n",
      "long.csv", c);
  SimOptions o;
  o.round = 60;
  SimResult during = simulate(cl, c, long_w, o);
  SimOptions none = o;
  none.fairness = false;
  SimResult after = simulate(cl, c, long_w, none);
  add_finish_time_fairness(after, cl, c, long_w, o);
  REQUIRE(during.jobs.size() == 3);
  CHECK(during.jobs[0].jct > 30 * 60);
  for (std::size_t i = 0; i < during.jobs.size(); ++i) {
    REQUIRE(during.jobs[i].rho);
    CHECK(*during.jobs[i].rho == *after.jobs[i].rho);
    CHECK(*during.jobs[i].isolated_jct == *after.jobs[i].isolated_jct);
  }
}

TEST_CASE_METHOD(Small, "runs speculated at other contentions are dropped, the needed ones kept",
                 "[simulator][fairness]") {
  SimOptions o;
  o.round = 60;
  IsolatedRuns plain(cl, c, w, o);
  IsolatedRuns ahead(cl, c, w, o);
  // A guess is queued once two further calls gave the same GPU counts.
  for (double k : {1.0, 3.0, 2.0, 2.0, 7.5, 7.5, 7.5}) ahead.speculate(w[0], k);
  for (int k = 0; k < 3; ++k) ahead.speculate(w[3], 4.0);  // never needed
  if (std::thread::hardware_concurrency() > 1) {
    // w[0] at contention 7.5 and w[3] at 4: a run per type and GPU count around the share.
    CHECK(ahead.speculated() > 0);
  } else {
    CHECK(ahead.speculated() == 0);  // no worker: nothing runs ahead
  }
  plain.add_job(w[0], 2.0);
  ahead.add_job(w[0], 2.0);
  ahead.add_job(w[0], 7.5);  // a speculated run, now needed
  plain.add_job(w[0], 7.5);
  for (std::size_t t = 0; t < cl.types.size(); ++t) {
    const int g = std::max(1, cl.types[t].capacity() / 2);  // the share with contention 2
    INFO("type " << cl.types[t].name);
    CHECK(ahead.jct(w[0], static_cast<int>(t), g) == plain.jct(w[0], static_cast<int>(t), g));
    const int g75 = std::max(1, static_cast<int>(cl.types[t].capacity() / 7.5));
    CHECK(ahead.jct(w[0], static_cast<int>(t), g75) == plain.jct(w[0], static_cast<int>(t), g75));
  }
  ahead.speculate(w[3], 5.0);  // after the results: nothing more runs ahead
}

TEST_CASE_METHOD(Small, "an isolated run that fails names its job, whichever thread ran it",
                 "[simulator][fairness]") {
  SimOptions o;
  o.max_time = 100;                    // no job finishes alone in 100 s
  Catalog fresh(test::catalog_dir());  // nothing loaded yet: the runner loads what it needs
  IsolatedRuns runs(cl, fresh, w, o);
  runs.add_job(w[1], 2.0);
  runs.add_job(w[1], 2.0);  // queued once
  auto e = test::error_of([&] { runs.jct(w[1], 0, 8); });
  CHECK(e.first == 70);
  CHECK(e.second.rfind("isolated run of bert-1: simulation passed", 0) == 0);
  // Only the workload's models are loaded before the workers start; another is refused.
  JobSpec other = w[1];
  other.name = "other";
  other.model = "imagenet";
  auto refused = test::error_of([&] { runs.add_job(other, 1.0); });
  CHECK(refused.first == 70);
  CHECK(refused.second ==
        "isolated runs of other: model imagenet was not loaded before the workers started");
}

TEST_CASE_METHOD(Small, "a horizon stops the simulation and leaves unfinished jobs out",
                 "[simulator]") {
  SimOptions o;
  o.horizon = 600;
  SimResult r = simulate(cl, c, w, o);
  CHECK(r.rounds.size() == 10);
  CHECK(r.rounds.back().t == 600);
  CHECK(r.jobs.size() < w.size());
  CHECK(r.summary.jobs == static_cast<int>(r.jobs.size()));
  for (const auto& j : r.jobs) CHECK_FALSE(j.rho);  // no fairness runs past a horizon
  // Every round with active jobs is timed; the estimate adds to the policy's time.
  REQUIRE(r.round_runtimes.size() == r.policy_runtimes.size());
  REQUIRE_FALSE(r.round_runtimes.empty());
  for (std::size_t i = 0; i < r.round_runtimes.size(); ++i) {
    CHECK(r.round_runtimes[i] >= r.policy_runtimes[i]);
  }
}

TEST_CASE("summary metrics on a hand-made result", "[metrics]") {
  SimResult r;
  r.round = 60;
  r.gpu_types = {"t4"};
  for (int i = 0; i < 100; ++i) {
    JobResult j;
    j.name = "j" + std::to_string(i);
    j.submission = i;
    j.jct = 100 + i;  // 100 .. 199
    j.completion = j.submission + j.jct;
    j.restarts = i % 3;
    j.gpu_seconds = {3600.0};
    j.rho = i < 10 ? 1.5 : 0.5;
    r.jobs.push_back(j);
  }
  r.rounds = {{60, 4, 3, {}, 0, 0, 0, 0, {}},
              {120, 6, 6, {}, 0, 0, 0, 0, {}},
              {180, 2, 1, {}, 0, 0, 0, 0, {}}};
  r.policy_runtimes = {0.001, 0.002, 0.003};
  r.round_runtimes = {0.004, 0.003, 0.005, 0.010};
  SimSummary s = summarize(r, sim_quirks(Compat::standard));
  CHECK(s.avg_jct == Approx(149.5));
  CHECK(s.median_jct == 149);  // nearest rank: the 50th of 100
  CHECK(s.p99_jct == 198);     // the 99th of 100
  // the artifact: index int(0.99 n) = 99
  CHECK(summarize(r, sim_quirks(Compat::reference)).p99_jct == 199);
  CHECK(s.makespan == Approx(99 + 199 - 0));
  CHECK(s.gpu_hours_per_job == Approx(1.0));
  CHECK(s.restarts_per_job == Approx(0.99));
  CHECK(s.unfair_fraction == Approx(0.1));
  CHECK(s.worst_rho == Approx(1.5));
  CHECK(s.contention_mean == Approx(4.0));
  CHECK(s.contention_max == 6);
  CHECK(s.queue_mean == Approx(2.0 / 3));
  CHECK(s.policy_runtime_median == Approx(0.002));
  CHECK(s.round_runtime_median == Approx(0.004));
  CHECK(s.round_runtime_p95 == Approx(0.010));
}
