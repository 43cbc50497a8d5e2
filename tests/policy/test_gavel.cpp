// The rigid baselines of lib/policy/gavel.cpp: gavel, ftf-lp, fifo, srtf.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "policy/baselines.hpp"
#include "policy/gavel_common.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

struct TypeSpec {
  std::string name;
  int gpus_per_node;
  int nodes;
};

Cluster make_cluster(const std::vector<TypeSpec>& types) {
  std::string toml;
  for (const auto& t : types) {
    toml += "[[node_groups]]\ngpu_type = \"" + t.name +
            "\"\ngpus_per_node = " + std::to_string(t.gpus_per_node) +
            "\ncount = " + std::to_string(t.nodes) + "\n";
  }
  return cluster_from_document(parse_documents(toml, "test.toml", {"Cluster"}).front());
}

// A rigid job at `gpus` GPUs and batch 100, running `rates[t]` iterations/s on type t (0: the
// type has no estimate; types that cannot hold the gang are skipped, as the estimator does).
// Progress is counted in iterations at the same batch.
GoodputRow rigid_job(const Cluster& c, const std::string& name, int gpus,
                     const std::vector<double>& rates, double age = 0) {
  GoodputRow r;
  r.job = name;
  r.adaptivity = Adaptivity::rigid;
  r.age = age;
  r.fixed_gpus = gpus;
  r.fixed_batch = 100;
  r.model.init_batch_size = 100;
  for (std::size_t t = 0; t < rates.size(); ++t) {
    const int gpn = c.types[t].gpus_per_node;
    if (rates[t] <= 0 || gpus > c.types[t].capacity()) continue;
    GoodputEntry e;
    e.config = Config{static_cast<int>(t), (gpus + gpn - 1) / gpn, gpus};
    e.throughput = rates[t] * 100;
    e.raw_goodput = e.throughput;
    e.goodput = rates[t];
    e.batch.global = 100;
    e.batch.local = (100 + gpus - 1) / gpus;
    r.fixed.push_back(e);
  }
  return r;
}

GoodputMatrix matrix(const Cluster& c, std::vector<GoodputRow> rows) {
  GoodputMatrix m;
  m.cluster = c;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  m.jobs = std::move(rows);
  return m;
}

std::unique_ptr<Policy> make(const std::string& name, bool reference = false, double round = 0) {
  PolicyOptions o;
  o.quirks = policy_quirks(reference ? Compat::reference : Compat::standard);
  o.round = round;
  return make_policy(name, o);
}

std::string dump(const Allocation& a) {
  return allocation_to_json(a).dump();
}

bool runs(const Allocation& a, const std::string& job) {
  const JobAllocation* j = a.find(job);
  return j && j->config.has_value();
}

// The invariants every allocation of these policies keeps.
void check_valid(const GoodputMatrix& m, const Allocation& a) {
  REQUIRE(a.jobs.size() == m.jobs.size());
  std::vector<int> used(m.cluster.types.size(), 0);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    const JobAllocation& j = a.jobs[i];
    const GoodputRow& row = m.jobs[i];
    REQUIRE(j.job == row.job);  // every job once, sorted by name
    if (!j.config) {
      CHECK_FALSE(j.reason.empty());
      continue;
    }
    const Config& c = *j.config;
    REQUIRE(c.type >= 0);
    REQUIRE(c.type < static_cast<int>(m.cluster.types.size()));
    const int gpn = m.cluster.types[c.type].gpus_per_node;
    CHECK(c.gpus == row.fixed_gpus);  // the gang, exactly
    CHECK(c.nodes == (c.gpus + gpn - 1) / gpn);
    bool offered = false;
    for (const auto& e : row.fixed) offered |= e.config.type == c.type;
    CHECK(offered);
    CHECK(static_cast<double>(j.batch.global) == row.fixed_batch);
    used[c.type] += c.gpus;
  }
  for (std::size_t t = 0; t < used.size(); ++t) CHECK(used[t] <= m.cluster.types[t].capacity());
}

GoodputMatrix random_matrix(std::mt19937& rng, const Cluster& c, int jobs, int first = 0) {
  std::uniform_real_distribution<double> u(0, 1);
  const int sizes[] = {1, 2, 4, 6, 8, 12, 16};
  std::vector<GoodputRow> rows;
  for (int j = 0; j < jobs; ++j) {
    std::vector<double> rates;
    for (std::size_t t = 0; t < c.types.size(); ++t)
      rates.push_back(u(rng) < 0.15 ? 0 : 0.1 + 5 * u(rng));
    GoodputRow r =
        rigid_job(c, "j" + std::to_string(100 + first + j), sizes[rng() % 7], rates, 3600 * u(rng));
    if (u(rng) < 0.8) r.progress = JobProgress{1000 * u(rng), 1000 + 20000 * u(rng)};
    rows.push_back(std::move(r));
  }
  return matrix(c, std::move(rows));
}

const char* const kPolicies[] = {"gavel", "ftf-lp", "fifo", "srtf"};

}  // namespace

TEST_CASE("gavel: the throughput LP on an obvious instance", "[gavel]") {
  // J1 is 10x faster on A, J2 only 2x: J1 takes A, J2 B (11 iterations/s in all).
  Cluster c = make_cluster({{"A", 4, 1}, {"B", 4, 1}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "J1", 4, {10, 1}), rigid_job(c, "J2", 4, {2, 1})});
  for (bool reference : {false, true}) {
    Allocation a = make("gavel", reference)->allocate(m, std::nullopt);
    check_valid(m, a);
    CHECK(a.status == "optimal");
    CHECK(a.objective == Approx(11));
    REQUIRE(runs(a, "J1"));
    REQUIRE(runs(a, "J2"));
    CHECK(*a.find("J1")->config == Config{0, 1, 4});
    CHECK(*a.find("J2")->config == Config{1, 1, 4});
    CHECK(a.policy == "gavel");
  }
  PolicyOptions o;
  o.explain = true;
  Allocation a = make_policy("gavel", o)->allocate(m, std::nullopt);
  REQUIRE(a.find("J1")->explain);
  CHECK(a.find("J1")->explain->value == 1.0);
  REQUIRE(a.find("J1")->explain->alternative);
  CHECK(*a.find("J1")->explain->alternative == Config{1, 1, 4});
}

TEST_CASE("gavel: two jobs that do not fit together share by their LP fractions", "[gavel]") {
  // 8 GPUs; J1 takes 4 at 1 it/s, J2 all 8 at 1.5 it/s. LP: x1 = 1, x2 = 0.5 (J1 is worth
  // more per GPU). They never fit together, so the rounds alternate J1, J2, J1, J1, J2, ...
  // and J1 gets 2/3 of them.
  Cluster c = make_cluster({{"A", 4, 2}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "J1", 4, {1}), rigid_job(c, "J2", 8, {1.5})});
  auto p = make("gavel");
  std::string seq;
  int j1 = 0;
  for (int round = 0; round < 30; ++round) {
    Allocation a = p->allocate(m, std::nullopt);
    check_valid(m, a);
    CHECK(a.objective == Approx(1.75));
    CHECK(runs(a, "J1") != runs(a, "J2"));  // exactly one of them, every round
    seq += runs(a, "J1") ? '1' : '2';
    j1 += runs(a, "J1");
    if (!runs(a, "J2")) {
      CHECK(a.find("J2")->reason.rfind("time-sharing: lower priority", 0) == 0);
    }
  }
  CHECK(seq.substr(0, 6) == "121121");
  CHECK(j1 == 20);
}

TEST_CASE("gavel: equal jobs get equal time at the analytic centre (reference)", "[gavel]") {
  // Three equal jobs that each need the whole type: every split of the one unit of time
  // is optimal. The simplex answers with a vertex (one job gets it all, the others none,
  // so they would wait forever: a job with x = 0 has priority 0); the centre of that face
  // gives each 1/3, and the rounds go round-robin.
  Cluster c = make_cluster({{"A", 4, 1}});
  GoodputMatrix m = matrix(
      c, {rigid_job(c, "J1", 4, {2}), rigid_job(c, "J2", 4, {2}), rigid_job(c, "J3", 4, {2})});
  const std::vector<baseline::Job> jobs = baseline::jobs_of(m, std::nullopt);
  const baseline::LpResult vertex = baseline::max_sum_throughput(jobs, c, SolveLimits{2}, false);
  const baseline::LpResult centre = baseline::max_sum_throughput(jobs, c, SolveLimits{2}, true);
  CHECK(vertex.x[0][0] + vertex.x[1][0] + vertex.x[2][0] == Approx(1));
  CHECK(std::max({vertex.x[0][0], vertex.x[1][0], vertex.x[2][0]}) == Approx(1));
  for (const auto& row : centre.x) CHECK(row[0] == 0.33333);
  CHECK(centre.objective == Approx(vertex.objective).epsilon(1e-4));
  CHECK(centre.status == "optimal");
  CHECK(centre.note.empty());

  auto p = make("gavel", true);
  std::map<std::string, int> rounds;
  for (int round = 0; round < 30; ++round) {
    Allocation a = p->allocate(m, std::nullopt);
    check_valid(m, a);
    for (const char* j : {"J1", "J2", "J3"}) rounds[j] += runs(a, j);
  }
  CHECK(rounds["J1"] == 10);
  CHECK(rounds["J2"] == 10);
  CHECK(rounds["J3"] == 10);
}

TEST_CASE("gavel: the analytic centre spreads over equal types and keeps the optimum", "[gavel]") {
  // One job, two equal types: the centre splits its time evenly (a vertex picks one).
  Cluster c = make_cluster({{"A", 4, 1}, {"B", 4, 1}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "J", 4, {3, 3})});
  auto jobs = baseline::jobs_of(m, std::nullopt);
  baseline::LpResult r = baseline::max_sum_throughput(jobs, c, SolveLimits{2}, true);
  CHECK(r.x[0][0] == 0.5);
  CHECK(r.x[0][1] == 0.5);
  CHECK(r.objective == Approx(3));

  // Random instances, ties included (rates from a few values): the centre's objective is
  // the simplex optimum, up to the rounding of x to 5 decimals, and it stays in the LP's
  // polytope.
  std::mt19937 rng(7);
  Cluster h = make_cluster({{"t4", 4, 6}, {"a100", 8, 2}, {"rtx", 8, 3}});
  for (int trial = 0; trial < 20; ++trial) {
    INFO("trial " << trial);
    std::uniform_int_distribution<int> pick(0, 3);
    const int sizes[] = {1, 2, 4, 8, 12, 16};
    std::vector<GoodputRow> rows;
    const int n = 5 + trial * 3;
    for (int j = 0; j < n; ++j) {
      std::vector<double> rates;
      for (int t = 0; t < 3; ++t) rates.push_back(0.5 * (1 + pick(rng)));
      rows.push_back(rigid_job(h, "j" + std::to_string(100 + j), sizes[rng() % 6], rates));
    }
    GoodputMatrix rm = matrix(h, std::move(rows));
    auto rj = baseline::jobs_of(rm, std::nullopt);
    const baseline::LpResult v = baseline::max_sum_throughput(rj, h, SolveLimits{2}, false);
    const baseline::LpResult z = baseline::max_sum_throughput(rj, h, SolveLimits{2}, true);
    REQUIRE(z.note.empty());
    CHECK(z.objective == Approx(v.objective).epsilon(1e-4));
    std::vector<double> used(h.types.size(), 0);
    for (std::size_t j = 0; j < rj.size(); ++j) {
      double sum = 0;
      for (std::size_t k = 0; k < rj[j].options.size(); ++k) {
        sum += z.x[j][k];
        used[rj[j].options[k].type] += z.x[j][k] * rj[j].options[k].gpus;
      }
      CHECK(sum <= 1 + 1e-4);
    }
    for (std::size_t t = 0; t < used.size(); ++t) CHECK(used[t] <= h.types[t].capacity() + 1e-3);
  }
}

TEST_CASE("gavel: a job no type can hold waits and says so", "[gavel]") {
  Cluster c = make_cluster({{"A", 4, 1}, {"B", 8, 1}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "big", 16, {1, 1}), rigid_job(c, "small", 2, {1, 1})});
  for (const char* name : kPolicies) {
    Allocation a = make(name)->allocate(m, std::nullopt);
    INFO(name);
    check_valid(m, a);
    CHECK_FALSE(runs(a, "big"));
    CHECK(a.find("big")->reason == "no GPU type has 16 GPUs");
    CHECK(runs(a, "small"));
  }
}

TEST_CASE("gavel: the counters, their reset and the job set live in policy_state", "[gavel]") {
  Cluster c = make_cluster({{"A", 4, 1}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "J1", 4, {1}), rigid_job(c, "J2", 4, {1})});
  PolicyOptions o;
  o.gavel_reset = 720;
  auto p = make_policy("gavel", o);
  using nlohmann::json;
  Allocation a = p->allocate(m, std::nullopt);
  json s = json::parse(a.policy_state);
  CHECK(s["policy"] == "gavel");
  CHECK(s["round"] == 360.0);  // the default round
  CHECK(s["elapsed"] == 360.0);
  // Both new (180 s each), one scheduled (+360 s).
  CHECK(s["cluster_time"]["A"] == 720.0);
  CHECK(double(s["job_time"]["J1"]["A"]) + double(s["job_time"]["J2"]["A"]) == 720.0);
  p->allocate(m, std::nullopt);
  a = p->allocate(m, std::nullopt);  // elapsed 720 at its start: the counters restart
  s = json::parse(a.policy_state);
  CHECK(s["last_reset"] == 720.0);
  CHECK(s["cluster_time"]["A"] == 720.0);
  // J2 leaves: it leaves the state too.
  GoodputMatrix only = matrix(c, {m.jobs[0]});
  a = p->allocate(only, std::nullopt);
  s = json::parse(a.policy_state);
  CHECK(s["job_time"].size() == 1);
  CHECK(s["job_time"].contains("J1"));
  CHECK(runs(a, "J1"));
}

TEST_CASE("gavel, ftf-lp: a policy restored from policy_state acts as the live one", "[gavel]") {
  std::mt19937 rng(5);
  Cluster c = make_cluster({{"t4", 4, 4}, {"a100", 8, 2}, {"rtx", 8, 2}});
  for (const char* name : {"gavel", "ftf-lp"}) {
    for (bool reference : {false, true}) {
      INFO(name << (reference ? " reference" : ""));
      auto live = make(name, reference);
      std::optional<Allocation> prev;
      GoodputMatrix m = random_matrix(rng, c, 12);
      for (int round = 0; round < 8; ++round) {
        // Jobs come and go: drop one, add one.
        if (round % 2 == 1) {
          m.jobs.erase(m.jobs.begin() + rng() % m.jobs.size());
          GoodputMatrix more = random_matrix(rng, c, 1, 100 + round);
          m.jobs.push_back(more.jobs.front());
          std::sort(m.jobs.begin(), m.jobs.end(),
                    [](const auto& a, const auto& b) { return a.job < b.job; });
        }
        for (auto& r : m.jobs) r.age += 360;
        Allocation got = live->allocate(m, prev);
        if (prev) {
          // Through JSON, as sia-solve --previous reads it.
          Allocation from_file =
              parse_allocation(test::doc_from(nlohmann::json{{"apiVersion", "sia/v1"},
                                                             {"kind", "Allocation"},
                                                             {"data", allocation_to_json(*prev)}}
                                                  .dump(),
                                              "Allocation")
                                   .data());
          Allocation restored = make(name, reference)->allocate(m, from_file);
          CHECK(dump(restored) == dump(got));
        }
        check_valid(m, got);
        prev = got;
      }
    }
  }
}

TEST_CASE("gavel: a foreign or broken policy_state", "[gavel]") {
  Cluster c = make_cluster({{"A", 4, 1}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "J1", 4, {1})});
  Allocation prev;
  prev.cluster = c;
  prev.policy_state = R"({"policy": "ftf-lp", "elapsed": 3600})";
  Allocation a = make("gavel")->allocate(m, prev);
  CHECK(a.note.find("counters start afresh") != std::string::npos);
  CHECK(nlohmann::json::parse(a.policy_state)["elapsed"] == 360.0);
  prev.policy_state = R"({"policy": "gavel", "job_time": {"J1": {"A": -1}}})";
  auto err = test::error_of([&] { make("gavel")->allocate(m, prev); });
  CHECK(err.first == 65);
  CHECK(err.second.find("job_time.J1.A") != std::string::npos);
}

TEST_CASE("baselines: knobs are checked", "[gavel]") {
  PolicyOptions o;
  o.gavel_reset = -1;
  CHECK(test::error_of([&] { make_policy("gavel", o); }).first == 64);
  o.gavel_reset = 0;
  o.time_limit = 0;
  for (const char* name : kPolicies) {
    CHECK(test::error_of([&] { make_policy(name, o); }).first == 64);
  }
  o.time_limit = 1;
  for (const char* name : kPolicies) CHECK(make_policy(name, o)->name() == name);
}

TEST_CASE("ftf-lp: equal jobs split evenly and alternate", "[gavel]") {
  // Alone on the 4 GPUs each would run at 1 it/s; the isolated share is 1/2, so D = prestart
  // (360 s to the first round + 30 s start-up) + 1000 / 0.5, and with x = 1/2 each
  // rho = (1000 / 0.5) / D.
  Cluster c = make_cluster({{"A", 4, 1}});
  std::vector<GoodputRow> rows = {rigid_job(c, "J1", 4, {1}), rigid_job(c, "J2", 4, {1})};
  for (auto& r : rows) r.progress = JobProgress{0, 1000};
  GoodputMatrix m = matrix(c, rows);
  auto p = make("ftf-lp");
  std::string seq;
  for (int round = 0; round < 6; ++round) {
    Allocation a = p->allocate(m, std::nullopt);
    check_valid(m, a);
    if (round == 0) {
      CHECK(a.status == "optimal");
      CHECK(a.objective == Approx(2000.0 / 2390).epsilon(1e-5));
    }
    seq += runs(a, "J1") ? '1' : '2';
  }
  CHECK(seq == "121212");
}

TEST_CASE("ftf-lp: the min-max rho of two unequal jobs", "[gavel]") {
  // rho1 = 1000 / (x1 * 2390), rho2 = 3000 / (x2 * 6390), x1 + x2 = 1: equal at
  // x1 = 1 / (1 + 7170 / 6390).
  Cluster c = make_cluster({{"A", 4, 1}});
  std::vector<GoodputRow> rows = {rigid_job(c, "J1", 4, {1}), rigid_job(c, "J2", 4, {1})};
  rows[0].progress = JobProgress{0, 1000};
  rows[1].progress = JobProgress{0, 3000};
  Allocation a = make("ftf-lp")->allocate(matrix(c, rows), std::nullopt);
  const double x1 = 1 / (1 + 7170.0 / 6390);
  CHECK(a.objective == Approx(1000 / (x1 * 2390)).epsilon(1e-4));
}

TEST_CASE("fifo, srtf: queue order, the fastest type with room, backfilling", "[gavel]") {
  // 8 GPUs on two nodes. A (oldest) takes 6, B (4) no longer fits, C (2) backfills.
  Cluster c = make_cluster({{"A", 4, 2}});
  std::vector<GoodputRow> rows = {rigid_job(c, "a", 6, {1}, 300), rigid_job(c, "b", 4, {1}, 200),
                                  rigid_job(c, "c", 2, {1}, 100)};
  rows[0].progress = JobProgress{0, 100000};  // 100000 s left
  rows[1].progress = JobProgress{900, 1000};  // 100 s
  rows[2].progress = JobProgress{0, 1000};    // 1000 s
  GoodputMatrix m = matrix(c, rows);
  Allocation f = make("fifo")->allocate(m, std::nullopt);
  check_valid(m, f);
  CHECK(runs(f, "a"));
  CHECK_FALSE(runs(f, "b"));
  CHECK(runs(f, "c"));
  CHECK(f.find("b")->reason.rfind("queue position 2 (arrival order): no type has 4 free GPUs", 0) ==
        0);
  // Shortest remaining time first: b, c, then a no longer fits.
  Allocation s = make("srtf")->allocate(m, std::nullopt);
  check_valid(m, s);
  CHECK(runs(s, "b"));
  CHECK(runs(s, "c"));
  CHECK_FALSE(runs(s, "a"));
  CHECK(s.find("a")->reason.rfind("queue position 3 (shortest remaining time first)", 0) == 0);
  // Unknown progress sorts last.
  m.jobs[1].progress.reset();
  s = make("srtf")->allocate(m, std::nullopt);
  CHECK(runs(s, "c"));
  CHECK(runs(s, "a"));
  CHECK_FALSE(runs(s, "b"));
}

TEST_CASE("fifo: each job its fastest type that still has room", "[gavel]") {
  Cluster c = make_cluster({{"slow", 4, 1}, {"fast", 4, 1}});
  GoodputMatrix m =
      matrix(c, {rigid_job(c, "old", 4, {1, 3}, 500), rigid_job(c, "new", 4, {1, 2}, 100)});
  Allocation a = make("fifo")->allocate(m, std::nullopt);
  check_valid(m, a);
  CHECK(a.find("old")->config->type == 1);
  CHECK(a.find("new")->config->type == 0);
}

TEST_CASE("baselines: a running non-preemptible job keeps its configuration", "[gavel]") {
  Cluster c = make_cluster({{"A", 4, 1}});
  GoodputMatrix m =
      matrix(c, {rigid_job(c, "slow", 4, {1}, 10), rigid_job(c, "fast", 4, {50}, 900)});
  m.jobs[1].preemptible = false;  // rows are by name: "fast", "slow"
  m.jobs[1].current = Config{0, 1, 4};
  for (const char* name : kPolicies) {
    INFO(name);
    Allocation a = make(name)->allocate(m, std::nullopt);
    check_valid(m, a);
    CHECK(runs(a, "slow"));
    CHECK_FALSE(runs(a, "fast"));
  }
}

TEST_CASE("baselines on random matrices: capacity, gangs, work conservation, determinism",
          "[gavel]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<TypeSpec> types;
    const int ntypes = 1 + trial % 3;
    for (int t = 0; t < ntypes; ++t) {
      types.push_back(
          {"t" + std::to_string(t), rng() % 2 ? 4 : 8, 1 + static_cast<int>(rng() % 3)});
    }
    Cluster c = make_cluster(types);
    GoodputMatrix m = random_matrix(rng, c, 1 + static_cast<int>(rng() % 15));
    for (const char* name : kPolicies) {
      for (bool reference : {false, true}) {
        INFO(name << (reference ? " reference" : "") << " trial " << trial);
        auto p = make(name, reference);
        auto twin = make(name, reference);
        std::optional<Allocation> prev;
        for (int round = 0; round < 3; ++round) {
          Allocation a = p->allocate(m, prev);
          check_valid(m, a);
          CHECK(a.note.find("interior point") == std::string::npos);  // the centre converged
          CHECK(dump(twin->allocate(m, prev)) == dump(a));            // deterministic
          if (reference) {
            // Work conserving: a waiting job has no type with room for its gang.
            std::vector<int> free;
            for (const auto& t : c.types) free.push_back(t.capacity());
            for (const auto& j : a.jobs) {
              if (j.config) free[j.config->type] -= j.config->gpus;
            }
            for (std::size_t i = 0; i < a.jobs.size(); ++i) {
              if (a.jobs[i].config) continue;
              for (const auto& e : m.jobs[i].fixed) CHECK(free[e.config.type] < e.config.gpus);
            }
          }
          prev = a;
        }
      }
    }
  }
}

TEST_CASE("baselines: gangs must pack onto nodes (default) or fit by GPU count (reference)",
          "[gavel]") {
  // Two 4-GPU nodes; two 3-GPU jobs leave one GPU on each node, not a 2-GPU block.
  Cluster c = make_cluster({{"A", 4, 2}});
  GoodputMatrix m = matrix(c, {rigid_job(c, "a", 3, {1}, 300), rigid_job(c, "b", 3, {1}, 200),
                               rigid_job(c, "c", 2, {1}, 100)});
  Allocation f = make("fifo")->allocate(m, std::nullopt);
  CHECK(runs(f, "a"));
  CHECK(runs(f, "b"));
  CHECK_FALSE(runs(f, "c"));
  CHECK(f.find("c")->reason.find("no type has 2 free GPUs that pack onto its nodes (free: A 2)") !=
        std::string::npos);
  Allocation r = make("fifo", true)->allocate(m, std::nullopt);
  CHECK(runs(r, "c"));
}

TEST_CASE("edf: guaranteed deadlines first, then best-effort ones, then arrival", "[gavel]") {
  // 8 GPUs on two nodes; every job wants 4: two run.
  Cluster c = make_cluster({{"A", 4, 2}});
  std::vector<GoodputRow> rows = {rigid_job(c, "a", 4, {1}, 300), rigid_job(c, "b", 4, {1}, 200),
                                  rigid_job(c, "c", 4, {1}, 100), rigid_job(c, "d", 4, {1}, 50)};
  rows[1].deadline_in = 5000;  // best-effort with a deadline
  rows[2].job_class = JobClass::guaranteed;
  rows[2].deadline_in = 9000;
  rows[3].job_class = JobClass::guaranteed;
  rows[3].deadline_in = 1000;
  GoodputMatrix m = matrix(c, rows);
  Allocation e = make("edf")->allocate(m, std::nullopt);
  check_valid(m, e);
  CHECK(runs(e, "d"));
  CHECK(runs(e, "c"));
  CHECK_FALSE(runs(e, "b"));
  CHECK_FALSE(runs(e, "a"));
  CHECK(e.find("b")->reason.rfind("queue position 3 (earliest deadline first)", 0) == 0);
  // Without guaranteed jobs: the best-effort deadline, then arrival order.
  m.jobs[2].job_class = m.jobs[3].job_class = JobClass::best_effort;
  m.jobs[2].deadline_in.reset();
  m.jobs[3].deadline_in.reset();
  e = make("edf")->allocate(m, std::nullopt);
  CHECK(runs(e, "b"));
  CHECK(runs(e, "a"));
}
