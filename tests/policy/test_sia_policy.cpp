#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "policy/sia_policy.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

// The Sia paper's Table 1: one node of 2 GPUs of type A, one node of 4 GPUs of type B.
GoodputMatrix table1() {
  GoodputMatrix m;
  auto docs = parse_documents(
      "[[node_groups]]\ngpu_type = \"A\"\ngpus_per_node = 2\ncount = 1\n"
      "[[node_groups]]\ngpu_type = \"B\"\ngpus_per_node = 4\ncount = 1\n",
      "table1.toml", {"Cluster"});
  m.cluster = cluster_from_document(docs.front());
  const Config cfg[] = {{0, 1, 1}, {0, 1, 2}, {1, 1, 1}, {1, 1, 2}, {1, 1, 4}};
  const double j1[] = {1, 1.5, 1.5, 2.5, 3.5};
  const double j2[] = {1.2, 2.1, 1, 1.9, 3.6};
  for (int j = 0; j < 2; ++j) {
    GoodputRow r;
    r.job = std::string(j == 0 ? "J1" : "J2");
    for (int c = 0; c < 5; ++c) {
      GoodputEntry e;
      e.config = cfg[c];
      e.goodput = e.raw_goodput = j == 0 ? j1[c] : j2[c];
      r.entries.push_back(e);
    }
    m.jobs.push_back(r);
  }
  return m;
}

}  // namespace

TEST_CASE("the paper's worked example (Table 1)", "[sia]") {
  for (auto [p, ln] : {std::pair{1.0, -1.1}, std::pair{-0.5, 1.1}}) {
    PolicyOptions o;
    o.p = p;
    o.lambda_n = ln;
    o.mip_gap = 0;
    SiaPolicy sia(o);
    Allocation a = sia.allocate(table1(), std::nullopt);
    INFO("p = " << p);
    REQUIRE(a.jobs.size() == 2);
    REQUIRE(a.jobs[0].config);
    REQUIRE(a.jobs[1].config);
    CHECK(*a.jobs[0].config == Config{1, 1, 4});  // J1 -> (1, 4, B)
    CHECK(*a.jobs[1].config == Config{0, 1, 2});  // J2 -> (1, 2, A)
    CHECK(a.status == "optimal");
  }
}

TEST_CASE("inconsistent knobs are rejected", "[sia]") {
  auto bad = [](double p, double ln) {
    PolicyOptions o;
    o.p = p;
    o.lambda_n = ln;
    return test::error_of([&] { validate_policy_options(o); });
  };
  CHECK(bad(0, 1.1).first == 64);
  CHECK(bad(-0.5, -1.1).first == 64);
  CHECK(bad(0.5, 1.1).first == 64);
  CHECK(bad(-0.5, 0.9).first == 64);
  CHECK(bad(-0.5, 1.1).first == 0);
  CHECK(bad(1, -2).first == 0);
  CHECK(test::error_of([] { make_policy("nope", {}); }).second.find("unknown policy") !=
        std::string::npos);
}

TEST_CASE("the restart factor", "[sia]") {
  GoodputRow r;
  r.restart_penalty = 30;
  r.age = 20;
  CHECK(SiaPolicy::restart_factor(r) == 1.0);  // younger than one restart
  r.age = 300;
  r.restarts = 2;
  CHECK(SiaPolicy::restart_factor(r) == Approx((300.0 - 60) / 330));
  r.restarts = 20;
  CHECK(SiaPolicy::restart_factor(r) == 0.0);
  // Charged against the seconds left too (Sia+): 90% done after 300 s leaves T = 33.3 s.
  r.restarts = 0;
  CHECK(SiaPolicy::restart_factor(r, true) == Approx(300.0 / 330));  // progress unknown
  r.progress = JobProgress{90, 100};
  CHECK(SiaPolicy::restart_factor(r) == Approx(300.0 / 330));
  CHECK(*SiaPolicy::seconds_left(r) == Approx(300.0 / 9));
  CHECK(SiaPolicy::restart_factor(r, true) == Approx((300.0 / 9) / (300.0 / 9 + 30)));
  r.restarts = 1;
  CHECK(SiaPolicy::restart_factor(r, true) == Approx((300.0 / 9 - 30) / (300.0 / 9 + 30)));
  r.progress = JobProgress{10, 100};  // far from done: age is the tighter charge
  CHECK(SiaPolicy::restart_factor(r, true) == Approx((300.0 - 30) / 330));
  r.progress = JobProgress{0, 100};  // nothing done yet: no estimate
  CHECK(!SiaPolicy::seconds_left(r));
  CHECK(SiaPolicy::restart_factor(r, true) == Approx((300.0 - 30) / 330));
}

TEST_CASE("restarts are charged off the current configuration; pins hold", "[sia]") {
  GoodputMatrix m = table1();
  // J1 runs on (1, 2, B), has restarted a lot: moving is worth little.
  m.jobs[0].current = Config{1, 1, 2};
  m.jobs[0].age = 600;
  m.jobs[0].restarts = 15;
  m.jobs[0].restart_penalty = 30;
  PolicyOptions o;
  o.mip_gap = 0;
  o.explain = true;
  SiaPolicy sia(o);
  Allocation a = sia.allocate(m, std::nullopt);
  REQUIRE(a.jobs[0].config);
  CHECK(*a.jobs[0].config == Config{1, 1, 2});
  REQUIRE(a.jobs[0].explain);
  CHECK(a.jobs[0].explain->restart_factor == Approx((600.0 - 450) / 630));
  // Pinned (inside a checkpoint-restore): keeps (1, 2, A) even though B is better.
  GoodputMatrix pin = table1();
  pin.jobs[1].current = Config{0, 1, 1};
  pin.jobs[1].restoring = true;
  Allocation b = SiaPolicy(o).allocate(pin, std::nullopt);
  REQUIRE(b.jobs[1].config);
  CHECK(*b.jobs[1].config == Config{0, 1, 1});
  CHECK(b.jobs[1].explain->pinned);
}

TEST_CASE("waiting jobs say why", "[sia]") {
  GoodputMatrix m = table1();
  // A third job that only fits on B, which J1 fills.
  GoodputRow r = m.jobs[0];
  r.job = "J3";
  r.entries = {r.entries[4]};
  m.jobs.push_back(r);
  GoodputRow none;
  none.job = "J4";
  m.jobs.push_back(none);
  Allocation a = SiaPolicy(PolicyOptions{}).allocate(m, std::nullopt);
  const JobAllocation* j3 = a.find("J3");
  const JobAllocation* j4 = a.find("J4");
  REQUIRE(j3);
  REQUIRE(j4);
  int allocated_b4 = 0;
  for (const auto& j : a.jobs) allocated_b4 += j.config && *j.config == Config{1, 1, 4};
  CHECK(allocated_b4 == 1);
  if (!j3->config) CHECK(j3->reason.rfind("capacity: its best configuration (1, 4, B)", 0) == 0);
  CHECK_FALSE(j4->config);
  CHECK(j4->reason.rfind("no valid configuration", 0) == 0);
}

TEST_CASE("random matrices: capacity, one configuration per job, pins", "[sia]") {
  std::mt19937 rng(11);
  Cluster c = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  auto configs = configs_for_cluster(c);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 40; ++trial) {
    GoodputMatrix m;
    m.cluster = c;
    std::vector<int> used(3, 0);
    for (int j = 0; j < 30; ++j) {
      GoodputRow r;
      r.job = "j" + std::to_string(100 + j);
      double base = 1;
      for (const auto& cfg : configs) {
        if (u(rng) < 0.5) continue;
        GoodputEntry e;
        e.config = cfg;
        e.goodput = base * std::pow(cfg.gpus, 0.3 + 0.6 * u(rng)) * (1 + u(rng));
        r.entries.push_back(e);
      }
      if (!r.entries.empty() && u(rng) < 0.2) {
        const Config& cur = r.entries.front().config;
        if (used[cur.type] + cur.gpus <= c.types[cur.type].capacity()) {
          used[cur.type] += cur.gpus;
          r.current = cur;
          r.restoring = true;
          r.age = 100;
        }
      }
      m.jobs.push_back(r);
    }
    Allocation a = SiaPolicy(PolicyOptions{}).allocate(m, std::nullopt);
    std::vector<int> total(3, 0);
    for (std::size_t j = 0; j < a.jobs.size(); ++j) {
      const GoodputRow& row = m.jobs[j];
      if (row.restoring) {
        REQUIRE(a.jobs[j].config);
        CHECK(*a.jobs[j].config == *row.current);
      }
      if (a.jobs[j].config) total[a.jobs[j].config->type] += a.jobs[j].config->gpus;
    }
    for (int t = 0; t < 3; ++t) CHECK(total[t] <= c.types[t].capacity());
  }
}

TEST_CASE("Sia+ knobs: efficiency floor, hysteresis, restarts and remaining work", "[sia]") {
  PolicyOptions o;
  CHECK(o.min_efficiency == 0.33);  // the default profile's
  CHECK(o.restart_remaining);
  CHECK(o.remaining_scale == 28800);
  CHECK(o.gpu_price == 0.0005);
  o.min_efficiency = 0;  // each knob alone below
  o.restart_remaining = false;
  o.remaining_scale = 0;
  o.gpu_price = 0;
  o.mip_gap = 0;
  // J1's 4 GPUs of B give 0.875 per GPU, under 0.6 x its best 1.5: not offered.
  o.min_efficiency = 0.6;
  Allocation a = SiaPolicy(o).allocate(table1(), std::nullopt);
  REQUIRE(a.jobs[0].config);
  CHECK(a.jobs[0].config->gpus < 4);
  o.min_efficiency = 0;
  // J1 on 2 GPUs of B moves to 4 (Table 1) unless its current goodput counts 11 times.
  GoodputMatrix m = table1();
  m.jobs[0].current = Config{1, 1, 2};
  m.jobs[0].age = 20;
  m.jobs[0].restart_penalty = 30;
  CHECK(*SiaPolicy(o).allocate(m, std::nullopt).jobs[0].config == Config{1, 1, 4});
  o.hysteresis = 10;
  CHECK(*SiaPolicy(o).allocate(m, std::nullopt).jobs[0].config == Config{1, 1, 2});
  o.hysteresis = 0;
  // The same move, with J1 nearly done: the restart is not worth its last seconds.
  m.jobs[0].age = 600;
  m.jobs[0].progress = JobProgress{99, 100};
  CHECK(*SiaPolicy(o).allocate(m, std::nullopt).jobs[0].config == Config{1, 1, 4});
  o.restart_remaining = true;
  CHECK(*SiaPolicy(o).allocate(m, std::nullopt).jobs[0].config == Config{1, 1, 2});
  o.restart_remaining = false;
  // J2 nearly done, J1 far from it (the same GPU-seconds so far): weighted, J2 gets B's 4
  // GPUs (J1 a configuration of A).
  GoodputMatrix w = table1();
  w.jobs[0].age = w.jobs[1].age = 3600;
  w.jobs[0].attained_service = w.jobs[1].attained_service = 7200;
  w.jobs[0].progress = JobProgress{1, 100};
  w.jobs[1].progress = JobProgress{99, 100};
  o.remaining_scale = 600;
  o.remaining_floor = 0;
  o.remaining_aging = 0;
  Allocation r = SiaPolicy(o).allocate(w, std::nullopt);
  REQUIRE(r.jobs[1].config);
  CHECK(*r.jobs[1].config == Config{1, 1, 4});
  o.remaining_scale = 0;
  // A price per GPU: at 0.1 per GPU (lambda_n 2, so that every configuration is worth more
  // than 4 GPUs' price), J1's 4 GPUs of B (goodput 3.5) are worth less than 2 of them
  // (2.5); unpriced, more.
  GoodputMatrix one = table1();
  one.jobs.pop_back();
  o.lambda_n = 2;
  REQUIRE(*SiaPolicy(o).allocate(one, std::nullopt).jobs[0].config == Config{1, 1, 4});
  o.gpu_price = 0.1;
  Allocation priced = SiaPolicy(o).allocate(one, std::nullopt);
  REQUIRE(priced.jobs[0].config);
  CHECK(*priced.jobs[0].config == Config{1, 1, 2});
  o.lambda_n = 1.1;
  // However high the price and however low the job's weight, it runs rather than wait
  // beside idle GPUs (the price stays under every configuration's value).
  one.jobs[0].progress = JobProgress{1, 1e6};
  one.jobs[0].attained_service = 1e6;
  o.gpu_price = 1;
  o.remaining_scale = 1;
  CHECK(SiaPolicy::priority(one.jobs[0], o) == 1e-3);  // the least priority
  Allocation lonely = SiaPolicy(o).allocate(one, std::nullopt);
  CHECK(lonely.jobs[0].config);
  o.remaining_scale = 0;
  for (auto bad : {&PolicyOptions::min_efficiency, &PolicyOptions::hysteresis,
                   &PolicyOptions::remaining_scale, &PolicyOptions::remaining_floor,
                   &PolicyOptions::remaining_aging, &PolicyOptions::gpu_price}) {
    for (double v : {-1.0, std::nan(""), 1e300}) {
      PolicyOptions x;
      x.*bad = v;
      CHECK(test::error_of([&] { validate_policy_options(x); }).first == 64);
    }
  }
}

TEST_CASE("Sia+ priority: work left, its floor and ageing", "[sia]") {
  PolicyOptions o;
  o.remaining_scale = 1000;
  o.remaining_floor = 0;
  o.remaining_aging = 0;
  GoodputRow row;
  CHECK(SiaPolicy::priority(row, o) == 1);  // progress unknown
  row.progress = JobProgress{0, 100};
  CHECK(SiaPolicy::priority(row, o) == 1);  // nothing done yet
  // 25 of 100 done in 1,000 GPU-seconds: 3,000 left, weight 1 / (1 + 3).
  row.progress = JobProgress{25, 100};
  row.attained_service = 1000;
  row.age = 7200;
  CHECK(SiaPolicy::priority(row, o) == Approx(0.25));
  o.remaining_floor = 0.5;
  CHECK(SiaPolicy::priority(row, o) == Approx(0.5));
  o.remaining_aging = 36000;  // the floor 0.5 + 7200 / 36000
  CHECK(SiaPolicy::priority(row, o) == Approx(0.7));
  row.age = 1e9;
  CHECK(SiaPolicy::priority(row, o) == 1);
  // Endless work (a total past any number) weighs the floor, never NaN.
  row.age = 0;
  row.progress = JobProgress{25, std::numeric_limits<double>::infinity()};
  CHECK(SiaPolicy::priority(row, o) == Approx(0.5));
  o.quirks.sia_without_plus = true;
  CHECK(SiaPolicy::priority(row, o) == 1);
  o.quirks.sia_without_plus = false;
  o.remaining_scale = 0;
  CHECK(SiaPolicy::priority(row, o) == 1);
}

TEST_CASE("policy quirks: the default profile has none, the reference profile all", "[sia]") {
  const PolicyQuirks none = policy_quirks(Compat::standard);
  const PolicyQuirks all = policy_quirks(Compat::reference);
  const bool PolicyQuirks::*flags[] = {&PolicyQuirks::sia_without_plus,
                                       &PolicyQuirks::sia_clipped_cost,
                                       &PolicyQuirks::sia_solver_ties,
                                       &PolicyQuirks::sia_pins_unpriced,
                                       &PolicyQuirks::sia_glpk_only,
                                       &PolicyQuirks::gavel_analytic_centre,
                                       &PolicyQuirks::gavel_ties_by_submission,
                                       &PolicyQuirks::gangs_by_gpu_count,
                                       &PolicyQuirks::themis_unchecked_grants};
  STATIC_REQUIRE(sizeof(PolicyQuirks) == sizeof(flags) / sizeof(flags[0]) * sizeof(bool));
  for (auto f : flags) {
    CHECK_FALSE(none.*f);
    CHECK(all.*f);
  }
}
