#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "model/perf_model.hpp"
#include "policy/baselines.hpp"
#include "policy/pollux_ga.hpp"
#include "test_util.hpp"

using namespace sia;

namespace {

Cluster make_cluster(const std::string& toml) {
  return cluster_from_document(parse_documents(toml, "cluster.toml", {"Cluster"}).front());
}

std::string group(const std::string& type, int gpus, int count) {
  return "[[node_groups]]\ngpu_type = \"" + type + "\"\ngpus_per_node = " + std::to_string(gpus) +
         "\ncount = " + std::to_string(count) + "\n";
}

// A job whose goodput grows (almost) linearly with GPUs: no network cost, noisy gradients.
GoodputRow linear_job(const std::string& name, int ntypes, double age = 600) {
  GoodputRow r;
  r.job = name;
  r.age = age;
  r.min_gpus = 1;
  r.max_gpus = 64;
  JobModelInfo& mi = r.model;
  mi.types.assign(ntypes, TypeModelInfo{});
  PerfParams pp;
  pp.alpha_c = 0.01;
  pp.beta_c = 0.001;
  pp.alpha_n = pp.beta_n = pp.alpha_r = pp.beta_r = 1e-8;
  pp.gamma = 1;
  mi.blind_known = true;
  mi.blind_params = pp.to_array();
  mi.blind_min_local = 1;
  mi.blind_max_local = 64;
  mi.gradient = GradientStats{1e-6, 100};
  mi.init_batch_size = 32;
  mi.max_batch_size = 4096;
  mi.max_observed_replicas = 32;
  for (auto& t : mi.types) {
    t.known = true;
    t.params = pp.to_array();
    t.max_local = 64;
  }
  return r;
}

GoodputMatrix matrix_of(const Cluster& c, std::vector<GoodputRow> rows) {
  GoodputMatrix m;
  m.cluster = c;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  m.jobs = std::move(rows);
  return m;
}

PolicyOptions options(unsigned seed = 1, int population = 100, int generations = 100) {
  PolicyOptions o;
  o.seed = seed;
  o.pollux_population = population;
  o.pollux_generations = generations;
  return o;
}

std::string dump(const Allocation& a) {
  return allocation_to_json(a).dump();
}

// A contended heterogeneous instance: 3 types, jobs with different shapes and histories.
GoodputMatrix random_matrix(std::mt19937& rng, int njobs) {
  Cluster c = make_cluster(group("small", 4, 3) + group("big", 8, 2) + group("odd", 6, 1));
  std::vector<GoodputRow> rows;
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < njobs; ++i) {
    GoodputRow r = linear_job("job-" + std::to_string(100 + i), 3, 60 + 3000 * u(rng));
    PerfParams pp = PerfParams::from_array(r.model.blind_params);
    pp.alpha_n = 0.05 * u(rng);
    pp.beta_n = 0.01 * u(rng);
    pp.alpha_r = pp.alpha_n / 2;
    pp.beta_r = pp.beta_n / 2;
    r.model.blind_params = pp.to_array();
    r.model.max_observed_replicas = static_cast<int>(u(rng) * 12);
    r.model.blind_known = u(rng) < 0.8;
    r.attained_service = 1000 * u(rng);
    r.restarts = static_cast<int>(u(rng) * 3);
    if (u(rng) < 0.2) r.min_gpus = 2;
    if (u(rng) < 0.2) {
      r.adaptivity = Adaptivity::rigid;
      r.min_gpus = r.max_gpus = 1 + static_cast<int>(u(rng) * 6);
      r.fixed_batch = 256;
    }
    for (int t = 0; t < 3; ++t) {
      PerfParams tp = pp;
      tp.beta_c *= 1 + t;  // "small" fastest per GPU
      r.model.types[t].params = tp.to_array();
    }
    rows.push_back(r);
  }
  return matrix_of(c, rows);
}

}  // namespace

TEST_CASE("pollux: the factory checks its knobs", "[pollux]") {
  CHECK(make_policy("pollux", {})->name() == "pollux");
  PolicyOptions o;
  o.pollux_population = 0;
  CHECK(test::error_of([&] { make_policy("pollux", o); }).first == 64);
  o = {};
  o.pollux_generations = 0;
  CHECK(test::error_of([&] { make_policy("pollux", o); }).first == 64);
}

TEST_CASE("pollux: one scalable job takes the whole small cluster", "[pollux]") {
  Cluster c = make_cluster(group("t4", 4, 2));
  auto policy = make_pollux_policy(options());
  Allocation a = policy->allocate(matrix_of(c, {linear_job("a", 1)}), std::nullopt);
  REQUIRE(a.jobs.size() == 1);
  REQUIRE(a.jobs[0].config);
  CHECK(*a.jobs[0].config == Config{0, 2, 8});
  CHECK(a.jobs[0].batch.global > 0);
  CHECK(a.jobs[0].batch.local >= 1);
  CHECK(a.policy == "pollux");
}

TEST_CASE("pollux: two identical jobs split the cluster", "[pollux]") {
  Cluster c = make_cluster(group("t4", 4, 2));
  auto policy = make_pollux_policy(options());
  Allocation a =
      policy->allocate(matrix_of(c, {linear_job("a", 1), linear_job("b", 1)}), std::nullopt);
  REQUIRE(a.jobs.size() == 2);
  for (const auto& j : a.jobs) {
    REQUIRE(j.config);
    CHECK(*j.config == Config{0, 1, 4});
  }
}

TEST_CASE("pollux: a job without a model scales linearly and the max replicas rule holds",
          "[pollux]") {
  Cluster c = make_cluster(group("t4", 4, 4));
  GoodputRow r = linear_job("new", 1);
  r.model.blind_known = false;
  r.model.max_observed_replicas = 0;  // never measured: one GPU at most
  GoodputRow s = linear_job("old", 1);
  s.model.max_observed_replicas = 3;  // up to 6
  auto policy = make_pollux_policy(options());
  Allocation a = policy->allocate(matrix_of(c, {r, s}), std::nullopt);
  REQUIRE(a.find("new")->config);
  CHECK(a.find("new")->config->gpus == 1);
  REQUIRE(a.find("old")->config);
  CHECK(a.find("old")->config->gpus == 6);
}

TEST_CASE("pollux: a tie between types keeps the more powerful one", "[pollux]") {
  // Two non-preemptible jobs hold one node of each type; the third job gets the other two
  // nodes (4 GPUs of each type), then keeps the faster type's.
  Cluster c = make_cluster(group("slow", 4, 2) + group("fast", 4, 2));
  for (int fast : {0, 1}) {
    std::vector<GoodputRow> rows;
    for (const char* name : {"a", "pin0", "pin1"}) {
      GoodputRow r = linear_job(name, 2);
      PerfParams slow = PerfParams::from_array(r.model.types[0].params);
      slow.beta_c *= 4;
      r.model.types[1 - fast].params = slow.to_array();
      rows.push_back(r);
    }
    rows[1].preemptible = rows[2].preemptible = false;
    rows[1].current = Config{0, 1, 4};
    rows[2].current = Config{1, 1, 4};
    auto policy = make_pollux_policy(options());
    Allocation a = policy->allocate(matrix_of(c, rows), std::nullopt);
    INFO("fast type " << fast);
    REQUIRE(a.find("a")->config);
    CHECK(*a.find("a")->config == Config{fast, 1, 4});
    CHECK(*a.find("pin0")->config == Config{0, 1, 4});
    CHECK(*a.find("pin1")->config == Config{1, 1, 4});
    CHECK(a.note.find("4 GPU(s)") != std::string::npos);
  }
}

TEST_CASE("pollux: repair enforces the search's constraints on random states", "[pollux]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    pollux::GaProblem prob;
    const int V = 1 + pollux::int_draw(rng, 0, 19);
    const int J = 1 + pollux::int_draw(rng, 0, 11);
    for (int n = 0; n < V; ++n) prob.capacity.push_back(pollux::int_draw(rng, 1, 8));
    prob.max_nodes = pollux::int_draw(rng, 1, 6);
    // A feasible base state for the pinned jobs (first in job order): one node each.
    prob.base.assign(static_cast<std::size_t>(J) * V, 0);
    std::vector<int> left = prob.capacity;
    for (int j = 0; j < J; ++j) {
      pollux::GaJob g;
      g.max_replicas = pollux::int_draw(rng, 1, 12);
      g.min_replicas = pollux::int_draw(rng, 0, 3);
      g.pinned = j < 2 && pollux::int_draw(rng, 0, 1) == 1;
      if (g.pinned) {
        const int n = pollux::int_draw(rng, 0, V - 1);
        prob.base[j * V + n] = static_cast<pollux::Cell>(left[n]);
        left[n] = 0;
      }
      prob.jobs.push_back(g);
    }
    for (int j = 0; j < J; ++j) {
      if (j > 0 && prob.jobs[j].pinned && !prob.jobs[j - 1].pinned) prob.jobs[j].pinned = false;
    }
    prob.speedup = [](int, int nodes, int replicas) { return replicas - 0.1 * nodes; };
    pollux::GeneticSearch search(prob);
    pollux::State x(static_cast<std::size_t>(J) * V);
    for (auto& cell : x) cell = static_cast<pollux::Cell>(pollux::int_draw(rng, 0, 9));
    pollux::State y = x;
    search.repair(x, rng);
    search.mutate(y, rng);
    for (int n = 0; n < V; ++n) {
      int used = 0, distributed = 0;
      for (int j = 0; j < J; ++j) {
        used += x[j * V + n];
        int nodes = 0;
        for (int k = 0; k < V; ++k) nodes += x[j * V + k] > 0;
        distributed += x[j * V + n] > 0 && nodes > 1;
        CHECK(y[j * V + n] >= 0);  // mutation stays within [0, max(x, capacity)]
        CHECK(y[j * V + n] <= std::max<int>(9, prob.capacity[n]));
      }
      CHECK(used <= prob.capacity[n]);
      CHECK(distributed <= 1);
    }
    for (int j = 0; j < J; ++j) {
      int total = 0, nodes = 0;
      for (int n = 0; n < V; ++n) {
        CHECK(x[j * V + n] >= 0);
        total += x[j * V + n];
        nodes += x[j * V + n] > 0;
      }
      if (prob.jobs[j].pinned) {
        CHECK(std::equal(x.begin() + j * V, x.begin() + (j + 1) * V, prob.base.begin() + j * V));
        continue;
      }
      CHECK(total <= prob.jobs[j].max_replicas);
      CHECK(nodes <= prob.max_nodes);
      CHECK((total == 0 || total >= prob.jobs[j].min_replicas));
    }
    // Repair is idempotent on the capacity and replica bounds.
    pollux::State z = x;
    search.repair(z, rng);
    int before = 0, after = 0;
    for (auto cell : x) before += cell;
    for (auto cell : z) after += cell;
    CHECK(after <= before);
  }
}

TEST_CASE("pollux: outputs on random clusters use one type within capacity", "[pollux]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    GoodputMatrix m = random_matrix(rng, 4 + 4 * trial);
    auto policy = make_pollux_policy(options(trial + 1, 30, 20));
    std::optional<Allocation> prev;
    for (int round = 0; round < 3; ++round) {
      Allocation a = policy->allocate(m, prev);
      REQUIRE(a.jobs.size() == m.jobs.size());
      std::map<int, int> per_type;
      for (std::size_t i = 0; i < a.jobs.size(); ++i) {
        const auto& j = a.jobs[i];
        CHECK(j.job == m.jobs[i].job);  // sorted by name
        if (!j.config) {
          CHECK(!j.reason.empty());
          continue;
        }
        const GpuType& t = m.cluster.types.at(j.config->type);
        per_type[j.config->type] += j.config->gpus;
        CHECK(j.config->gpus >= 1);
        CHECK(j.config->nodes >= 1);
        CHECK(j.config->nodes <= t.node_count);
        CHECK(j.config->gpus <= j.config->nodes * t.gpus_per_node);
        if (m.jobs[i].adaptivity == Adaptivity::rigid) {
          CHECK(j.config->gpus == m.jobs[i].max_gpus);
        } else {
          CHECK(j.config->gpus <= 6);  // the smallest type's GPUs
          CHECK(j.config->gpus <=
                std::max({1, 2 * m.jobs[i].model.max_observed_replicas, m.jobs[i].min_gpus}));
        }
        CHECK(j.batch.global > 0);
      }
      for (auto [t, g] : per_type) CHECK(g <= m.cluster.types[t].capacity());
      // The state: GPUs per virtual node (4 GPUs: small 3, big 4, odd 1 + a 2-GPU one).
      auto s = nlohmann::json::parse(a.policy_state);
      CHECK(s["vnode_gpus"] == 4);
      REQUIRE(s["capacity"].size() == 9);
      std::vector<int> used(9, 0);
      std::map<int, int> distributed;
      for (auto it = s["base"].begin(); it != s["base"].end(); ++it) {
        for (const auto& cell : *it) used[cell[0].get<int>()] += cell[1].get<int>();
        if (it->size() > 1) {
          for (const auto& cell : *it) ++distributed[cell[0].get<int>()];
        }
      }
      for (int n = 0; n < 9; ++n) CHECK(used[n] <= s["capacity"][n].get<int>());
      for (auto [n, k] : distributed) CHECK(k <= 1);
      // Next round: the jobs now hold what they got.
      for (auto& row : m.jobs) {
        const JobAllocation* ja = a.find(row.job);
        row.current = ja && ja->config ? ja->config : std::nullopt;
        row.age += 60;
      }
      prev = a;
    }
  }
}

TEST_CASE("pollux: a seed gives the same answers, and seeds may differ", "[pollux]") {
  std::mt19937 rng(3);
  GoodputMatrix m = random_matrix(rng, 24);
  auto run = [&](unsigned seed) {
    auto policy = make_pollux_policy(options(seed, 20, 5));
    std::string out;
    std::optional<Allocation> prev;
    for (int round = 0; round < 3; ++round) {
      Allocation a = policy->allocate(m, prev);
      out += dump(a);
      prev = a;
    }
    return out;
  };
  const std::string first = run(1);
  CHECK(run(1) == first);
  std::set<std::string> seen{first};
  for (unsigned seed = 2; seed <= 5; ++seed) seen.insert(run(seed));
  CHECK(seen.size() > 1);
}

TEST_CASE("pollux: policy_state carries the base state across CLI rounds", "[pollux]") {
  std::mt19937 rng(5);
  GoodputMatrix m = random_matrix(rng, 10);
  auto first = make_pollux_policy(options(1, 30, 30));
  Allocation a = first->allocate(m, std::nullopt);
  // Through the document, as sia-solve --previous reads it.
  Allocation back = parse_allocation(
      parse_documents(dump_document("Allocation", {}, allocation_to_json(a), false), "a.json",
                      {"Allocation"})
          .front()
          .data());
  REQUIRE(back.policy_state == a.policy_state);
  // A fresh policy with no search at all answers the base state it restored.
  auto second = make_pollux_policy(options(1, 30, 1));
  Allocation b = second->allocate(m, back);
  auto sa = nlohmann::json::parse(a.policy_state);
  auto sb = nlohmann::json::parse(b.policy_state);
  CHECK(sa["base"] == sb["base"]);
  CHECK(sb["round"] == sa["round"].get<int>() + 1);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) CHECK(a.jobs[i].config == b.jobs[i].config);
  // Another policy's state is ignored, and so is a state for another cluster.
  back.policy = "gavel";
  auto third = make_pollux_policy(options(1, 30, 1));
  Allocation c = third->allocate(m, back);
  CHECK(nlohmann::json::parse(c.policy_state)["round"] == 1);
}

// Found by fuzz/document (an Allocation given back to the policy that wrote it):
// vnode_gpus and round of 1e300 were converted to int (undefined behaviour); a state that
// does not fit is ignored like any other that does not match.
TEST_CASE("pollux: a policy_state with numbers out of range is ignored", "[pollux]") {
  std::mt19937 rng(5);
  GoodputMatrix m = random_matrix(rng, 4);
  Allocation a = make_pollux_policy(options(1, 30, 30))->allocate(m, std::nullopt);
  for (const char* key : {"vnode_gpus", "round"}) {
    Allocation back = a;
    auto s = nlohmann::json::parse(a.policy_state);
    s[key] = 1e300;
    back.policy_state = s.dump();
    Allocation b = make_pollux_policy(options(1, 30, 1))->allocate(m, back);
    auto sb = nlohmann::json::parse(b.policy_state);
    CHECK(sb["round"] == 1);
  }
}
