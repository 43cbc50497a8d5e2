#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "core/allocation.hpp"
#include "core/document.hpp"
#include "place/placer.hpp"
#include "policy/baselines.hpp"
#include "policy/themis_auction.hpp"
#include "policy/themis_model.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"
#include "test_util.hpp"
#include "themis_rows.hpp"

using namespace sia;
using json = nlohmann::json;
using namespace sia::themis_test;

namespace {

PolicyOptions options(double f = 0.8, double lease = 600, double round = 300) {
  PolicyOptions o;
  o.themis_f = f;
  o.themis_lease = lease;
  o.round = round;
  return o;
}

json state_of(const Allocation& a) {
  return json::parse(a.policy_state);
}
std::string dump(const Allocation& a) {
  return allocation_to_json(a).dump();
}

std::optional<Config> config_of(const Allocation& a, const std::string& job) {
  const JobAllocation* ja = a.find(job);
  REQUIRE(ja);
  return ja->config;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The auction on its own.

TEST_CASE("themis auction: the spec's worked example (one node, A and B)", "[themis]") {
  // Worked example: v_A = 1.5, 2, 2.4, 2.6 and v_B = 1.2, 1.4, 1.5, 1.55 for
  // 1..4 GPUs of one 4-GPU node; PF = (3, 1), c_A = 0.774, c_B = 0.923.
  AuctionProblem p;
  p.apps = 2;
  p.capacity = {4};
  const double va[] = {1.5, 2.0, 2.4, 2.6}, vb[] = {1.2, 1.4, 1.5, 1.55};
  for (int q = 1; q <= 4; ++q) {
    p.bids.push_back({0, std::log(va[q - 1]), q, 1, {{0, q}}});
    p.bids.push_back({1, std::log(vb[q - 1]), q, 1, {{0, q}}});
  }
  AuctionResult r = run_auction(p, {});
  REQUIRE(r.status == "optimal");
  REQUIRE(r.pick[0] >= 0);
  REQUIRE(r.pick[1] >= 0);
  CHECK(p.bids[r.pick[0]].gpus == 3);
  CHECK(p.bids[r.pick[1]].gpus == 1);
  CHECK(r.opt == Approx(std::log(2.4) + std::log(1.2)));
  CHECK(r.payment[0] == Approx(std::exp(std::log(1.2) - std::log(1.55))));  // 0.774
  CHECK(r.payment[1] == Approx(2.4 / 2.6));                                 // 0.923
  CHECK(r.payment[0] == Approx(0.774).epsilon(1e-3));
  CHECK(r.payment[1] == Approx(0.923).epsilon(1e-3));
  CHECK(r.solves == 3);
  CHECK(auction_feasible(p, r.pick));

  // Without GLPK: the greedy, feasible, payments within [0, 1].
  AuctionOptions greedy;
  greedy.use_glpk = false;
  AuctionResult g = run_auction(p, greedy);
  CHECK(g.status == "greedy");
  CHECK(auction_feasible(p, g.pick));
  for (double c : g.payment) CHECK((c >= 0 && c <= 1));
}

TEST_CASE("themis auction: a single bidder pays nothing", "[themis]") {
  AuctionProblem p;
  p.apps = 3;
  p.capacity = {4};
  p.bids.push_back({1, 0.5, 2, 1, {{0, 2}}});
  p.bids.push_back({1, 0.7, 4, 1, {{0, 4}}});
  p.bids.push_back({2, -0.1, 1, 1, {{0, 1}}});  // no gain: ignored
  AuctionResult r = run_auction(p, {});
  CHECK(r.pick == std::vector<int>{-1, 1, -1});
  CHECK(r.payment == std::vector<double>{1, 1, 1});
  CHECK(r.opt == Approx(0.7));
}

TEST_CASE("themis auction: PF optimum and payments on random instances", "[themis]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    AuctionProblem p;
    p.apps = std::uniform_int_distribution<int>(1, 5)(rng);
    const int rows = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int k = 0; k < rows; ++k)
      p.capacity.push_back(std::uniform_int_distribution<int>(1, 8)(rng));
    for (int a = 0; a < p.apps; ++a) {
      const int nb = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int b = 0; b < nb; ++b) {
        AuctionBid bid;
        bid.app = a;
        bid.weight = std::uniform_real_distribution<double>(0.01, 2)(rng);
        const int row = std::uniform_int_distribution<int>(0, rows - 1)(rng);
        bid.gpus = std::uniform_int_distribution<int>(1, 6)(rng);
        bid.nodes = 1;
        bid.usage = {{row, bid.gpus}};
        p.bids.push_back(bid);
      }
    }
    // Brute force: the best sum of weights, with and without each app.
    std::function<double(int, std::vector<double>&, int)> best =
        [&](int a, std::vector<double>& room, int excluded) -> double {
      if (a == p.apps) return 0.0;
      double v = best(a + 1, room, excluded);
      if (a == excluded) return v;
      for (const AuctionBid& b : p.bids) {
        if (b.app != a || !(b.weight > 0)) continue;
        const auto [row, amount] = b.usage.front();
        if (amount > room[row]) continue;
        room[row] -= amount;
        v = std::max(v, b.weight + best(a + 1, room, excluded));
        room[row] += amount;
      }
      return v;
    };
    std::vector<double> room = p.capacity;
    const double opt = best(0, room, -1);
    AuctionResult r = run_auction(p, {});
    INFO("trial " << trial);
    REQUIRE(auction_feasible(p, r.pick));
    CHECK(r.opt == Approx(opt).margin(1e-5));
    for (int a = 0; a < p.apps; ++a) {
      CHECK((r.payment[a] > 0 && r.payment[a] <= 1));
      if (r.pick[a] < 0) {
        CHECK(r.payment[a] == 1);
        continue;
      }
      std::vector<double> room2 = p.capacity;
      const double without = best(0, room2, a);
      const double others = r.opt - p.bids[r.pick[a]].weight;
      CHECK(r.payment[a] == Approx(std::exp(others - without)).margin(1e-5));
    }
  }
}

// ---------------------------------------------------------------------------------------
// Capacity rows and the ideal time.

TEST_CASE("themis: size-class rows keep gangs placeable", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 2}});
  const auto rows = themis_rows(c);
  REQUIRE(rows.size() == 3);  // 1, 2, 4
  auto fit = [&](const std::vector<Config>& gangs) {
    std::vector<double> used(rows.size(), 0.0);
    for (const Config& g : gangs) {
      for (auto [k, amount] : themis_usage(rows, c, g)) used[k] += amount;
    }
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (used[k] > rows[k].capacity) return false;
    }
    return true;
  };
  CHECK(fit({{0, 1, 3}, {0, 1, 3}, {0, 1, 1}, {0, 1, 1}}));
  CHECK_FALSE(fit({{0, 1, 3}, {0, 1, 3}, {0, 1, 2}}));  // 8 GPUs, but 3 + 2 > 4
  CHECK(fit({{0, 2, 6}, {0, 1, 2}}));
  CHECK_FALSE(fit({{0, 2, 6}, {0, 1, 3}}));
}

TEST_CASE("themis: the ideal time (the spec's worked example and Sia's Eq. 3)", "[themis]") {
  // Themis' ideal time (Mahajan et al., NSDI '20): 10,000 iterations of 1 s on one GPU, 16 GPUs,
  // N_avg = 4, D_max = 8: T_id = 10,000 / 4 = 2,500 s.
  const Cluster c = cluster_with({{"a", 4, 4}});
  const auto rows = themis_rows(c);
  GoodputRow r = gang_job(c, "j", 8, {8.0}, 3000, 4000, 10000);
  const auto gangs = themis_gangs(r, c, rows);
  REQUIRE(gangs.size() == 1);
  CHECK(gangs[0].rate == 8.0);
  CHECK(themis_ideal_time(r, c, gangs, 4, 10000) == Approx(2500));
  CHECK(themis_ideal_time(r, c, gangs, 1, 10000) == Approx(1250));    // capped at the gang
  CHECK(themis_ideal_time(r, c, gangs, 32, 10000) == Approx(20000));  // half a GPU
  CHECK(themis_ideal_time(r, c, gangs, 6.4, 10000) ==                 // 2.5 GPUs
        Approx(5000 + 0.5 * (10000.0 / 3 - 5000)));
  // Two types of 16 GPUs, the second half as fast: 1 / (0.5 / 2500 + 0.5 / 5000).
  const Cluster h = cluster_with({{"a", 4, 4}, {"b", 8, 2}});
  GoodputRow r2 = gang_job(h, "j", 8, {8.0, 4.0}, 3000, 4000, 10000);
  const auto g2 = themis_gangs(r2, h, themis_rows(h));
  REQUIRE(g2.size() == 2);
  CHECK(themis_ideal_time(r2, h, g2, 4, 10000) == Approx(1 / (0.5 / 2500 + 0.5 / 5000)));
  // A type it cannot run on is left out.
  GoodputRow r3 = gang_job(h, "j", 8, {8.0, 0.0}, 3000, 4000, 10000);
  CHECK(themis_ideal_time(r3, h, themis_gangs(r3, h, themis_rows(h)), 4, 10000) == Approx(2500));
}

// ---------------------------------------------------------------------------------------
// The policy, by hand.

TEST_CASE("themis: the job furthest from fair wins the offer", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 1}});
  // Same speed and size; A has waited long (rho_old 21600 / 2000), B just came (1700 / 2000).
  auto m = matrix_of(
      c, {gang_job(c, "A", 4, {1.0}, 20000, 0, 1000), gang_job(c, "B", 4, {1.0}, 100, 0, 1000)});
  auto p = make_themis_policy(options());
  Allocation a = p->allocate(m, std::nullopt);
  CHECK(a.policy == "themis");
  REQUIRE(config_of(a, "A"));
  CHECK(*config_of(a, "A") == Config{0, 1, 4});
  CHECK_FALSE(config_of(a, "B"));
  CHECK(a.find("B")->reason.find("not in the auction") != std::string::npos);
  // Alone in the auction, A pays nothing: a full lease of 600 s = 2 rounds of 300 s.
  json s = state_of(a);
  CHECK(s["jobs"]["A"]["lease"]["payment"] == 1.0);
  CHECK(s["jobs"]["A"]["lease"]["how"] == "auction");
  CHECK(s["jobs"]["A"]["lease"]["end"].get<int>() - s["jobs"]["A"]["lease"]["start"].get<int>() ==
        2);
  CHECK_FALSE(s["jobs"]["B"].contains("lease"));

  // With f = 0 both bid, and proportional fairness prefers B's larger relative gain:
  // ln(1700 / 1100) > ln(21600 / 21000).
  auto q = make_themis_policy(options(0));
  Allocation b = q->allocate(m, std::nullopt);
  CHECK_FALSE(config_of(b, "A"));
  CHECK(config_of(b, "B"));
}

TEST_CASE("themis: a winner that displaces others pays a hidden payment", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 1}});
  // A (2 GPUs): w_A = ln((0 + 600 + 100) / 100); B (4 GPUs): w_B = ln(2600 / 2000). Both
  // bid (f = 0); A wins and keeps B out, so c_A = exp(-w_B) = 2000 / 2600.
  auto m = matrix_of(
      c, {gang_job(c, "A", 2, {1.0}, 0, 0, 100), gang_job(c, "B", 4, {1.0}, 1000, 0, 1000)});
  auto p = make_themis_policy(options(0));
  Allocation a = p->allocate(m, std::nullopt);
  REQUIRE(config_of(a, "A"));
  CHECK_FALSE(config_of(a, "B"));
  CHECK(a.find("B")->reason.find("lost the auction") != std::string::npos);
  CHECK(a.objective == Approx(std::log(7.0)));
  json lease = state_of(a)["jobs"]["A"]["lease"];
  CHECK(lease["payment"].get<double>() == Approx(2000.0 / 2600));
  // A lease of c * 600 s = 1.54 rounds of 300 s: one or two.
  const int rounds = lease["end"].get<int>() - lease["start"].get<int>();
  CHECK((rounds == 1 || rounds == 2));
}

TEST_CASE("themis: leases hold across rounds until they expire", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 1}});
  auto p = make_themis_policy(options());
  // Round 1: A alone wins the node for two rounds.
  Allocation r1 = p->allocate(matrix_of(c, {gang_job(c, "A", 4, {1.0}, 0, 0, 5000)}), std::nullopt);
  REQUIRE(config_of(r1, "A"));
  // Round 2: B arrives far worse off, but A's lease holds.
  GoodputRow a2 = gang_job(c, "A", 4, {1.0}, 360, 360, 5000);
  a2.current = Config{0, 1, 4};
  GoodputRow b2 = gang_job(c, "B", 4, {1.0}, 50000, 0, 5000);
  Allocation r2 = p->allocate(matrix_of(c, {a2, b2}), r1);
  CHECK(config_of(r2, "A"));
  CHECK_FALSE(config_of(r2, "B"));
  CHECK(r2.find("B")->reason == "every GPU is leased");
  // Round 3: the lease has ended; B ranks first and takes the node.
  GoodputRow a3 = gang_job(c, "A", 4, {1.0}, 720, 720, 5000);
  a3.current = Config{0, 1, 4};
  GoodputRow b3 = gang_job(c, "B", 4, {1.0}, 50360, 0, 5000);
  Allocation r3 = p->allocate(matrix_of(c, {a3, b3}), r2);
  CHECK_FALSE(config_of(r3, "A"));
  CHECK(config_of(r3, "B"));
  // N_avg is per job: A has seen 1, 2, 2 jobs.
  json s = state_of(r3);
  CHECK(s["jobs"]["A"]["contention_sum"] == 5.0);
  CHECK(s["jobs"]["A"]["rounds"] == 3);
  CHECK(s["jobs"]["B"]["contention_sum"] == 4.0);
  CHECK(s["round"] == 3);
}

TEST_CASE("themis: a running non-preemptible job keeps its GPUs", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 1}});
  GoodputRow n = gang_job(c, "N", 4, {1.0}, 10, 0, 5000);
  n.preemptible = false;
  n.current = Config{0, 1, 4};
  auto m = matrix_of(c, {n, gang_job(c, "B", 4, {1.0}, 90000, 0, 5000)});
  auto p = make_themis_policy(options());
  for (int round = 0; round < 3; ++round) {
    Allocation a = p->allocate(m, std::nullopt);
    CHECK(config_of(a, "N"));
    CHECK_FALSE(config_of(a, "B"));
    CHECK(state_of(a)["jobs"]["N"]["lease"]["how"] == "pinned");
  }
}

TEST_CASE("themis: leftover GPUs go to jobs outside the auction", "[themis]") {
  const Cluster c = cluster_with({{"t4", 4, 2}});
  // Three jobs, f = 0.8: one bids (A, the furthest from fair), wins 4 GPUs; the other 4
  // go to one outside the auction whose gang fits (B), not to C (8 GPUs).
  auto m = matrix_of(
      c, {gang_job(c, "A", 4, {1.0}, 90000, 0, 1000), gang_job(c, "B", 4, {1.0}, 10, 0, 1000),
          gang_job(c, "C", 8, {1.0}, 20, 0, 1000)});
  auto p = make_themis_policy(options());
  Allocation a = p->allocate(m, std::nullopt);
  REQUIRE(config_of(a, "A"));
  REQUIRE(config_of(a, "B"));
  CHECK_FALSE(config_of(a, "C"));
  json s = state_of(a);
  CHECK(s["jobs"]["A"]["lease"]["how"] == "auction");
  CHECK(s["jobs"]["B"]["lease"]["how"] == "leftover");
  CHECK(s["jobs"]["B"]["lease"]["payment"] == 1.0);
}

TEST_CASE("themis: a gang the placer cannot fit beside running gangs gives its grant back",
          "[themis]") {
  // Five 4-GPU nodes. X and Y (6 GPUs each) run with their 2-GPU remainders on two
  // different nodes (W filled X's remainder node when Y came); once W is gone, Z needs two
  // whole nodes, and 8 free GPUs in 2 + 2 + 4 cannot give them although every capacity
  // row has room.
  const Cluster c = cluster_with({{"t4", 4, 5}});
  GoodputRow x = gang_job(c, "X", 6, {1.0}, 0, 0, 1e6);
  GoodputRow w = gang_job(c, "W", 2, {1.0}, 0, 0, 1e6);
  GoodputRow y = gang_job(c, "Y", 6, {1.0}, 0, 0, 1e6);
  GoodputRow z = gang_job(c, "Z", 8, {1.0}, 0, 0, 1e6);
  auto p = make_themis_policy(options(0, 6000));
  Allocation r1 = p->allocate(matrix_of(c, {x, w}), std::nullopt);
  REQUIRE(config_of(r1, "X"));
  REQUIRE(config_of(r1, "W"));
  Placement p1 = place(r1, c, std::nullopt);
  x.current = Config{0, 2, 6};
  w.current = Config{0, 1, 2};
  Allocation r2 = p->allocate(matrix_of(c, {x, w, y}), r1);
  REQUIRE(config_of(r2, "Y"));
  Placement p2 = place(r2, c, p1);
  REQUIRE(p2.waiting.empty());
  y.current = Config{0, 2, 6};
  Allocation r3 = p->allocate(matrix_of(c, {x, y, z}), r2);
  INFO(r3.note);
  Placement p3 = place(r3, c, p2);
  CHECK(p3.waiting.empty());
  CHECK(config_of(r3, "X"));
  CHECK(config_of(r3, "Y"));
  // (The placer puts remainders best-fit, lowest index first: X's and W's share node 0,
  // Y's goes to node 1.)
  CHECK_FALSE(config_of(r3, "Z"));
  CHECK(r3.find("Z")->reason.find("cannot be placed") != std::string::npos);
  CHECK_FALSE(state_of(r3)["jobs"]["Z"].contains("lease"));
}

// ---------------------------------------------------------------------------------------
// Properties on random inputs.

namespace {

struct World {
  Cluster cluster;
  std::vector<GoodputRow> jobs;
  std::vector<std::vector<double>> rates;
};

World random_world(std::mt19937& rng, bool unit_nodes) {
  World w;
  const int ntypes = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<std::tuple<std::string, int, int>> groups;
  const int sizes[] = {1, 2, 4, 8};
  for (int t = 0; t < ntypes; ++t) {
    const int gpn = unit_nodes ? 1 : sizes[std::uniform_int_distribution<int>(0, 3)(rng)];
    const int count = unit_nodes ? std::uniform_int_distribution<int>(2, 12)(rng)
                                 : std::uniform_int_distribution<int>(1, 4)(rng);
    groups.push_back({"g" + std::to_string(t), gpn, count});
  }
  w.cluster = cluster_with(groups);
  const int njobs = std::uniform_int_distribution<int>(1, 14)(rng);
  const int gangs[] = {1, 2, 3, 4, 6, 8, 12};
  for (int j = 0; j < njobs; ++j) {
    const int gang = gangs[std::uniform_int_distribution<int>(0, 6)(rng)];
    std::vector<double> rates;
    for (int t = 0; t < ntypes; ++t) {
      rates.push_back(std::uniform_int_distribution<int>(0, 3)(rng) == 0
                          ? 0.0
                          : std::uniform_real_distribution<double>(0.5, 5)(rng));
    }
    const double total = std::uniform_real_distribution<double>(500, 20000)(rng);
    const double age = std::uniform_real_distribution<double>(0, 5000)(rng);
    w.jobs.push_back(gang_job(w.cluster, "job" + std::to_string(j), gang, rates, age, 0, total));
    w.rates.push_back(rates);
  }
  return w;
}

// Runs `rounds` rounds of `policy` on `w`, applying each answer as the simulator does
// (placement, progress at the gang's rate), and calls `check` on every answer.
void run_rounds(
    World w, Policy& policy, int rounds,
    const std::function<void(const GoodputMatrix&, const Allocation&, const Placement&)>& check) {
  std::optional<Allocation> prev;
  std::optional<Placement> prev_place;
  for (int r = 0; r < rounds && !w.jobs.empty(); ++r) {
    GoodputMatrix m = matrix_of(w.cluster, w.jobs);
    Allocation a = policy.allocate(m, prev);
    Placement pl = place(a, w.cluster, prev_place);
    check(m, a, pl);
    std::vector<GoodputRow> next;
    for (GoodputRow row : m.jobs) {
      const JobPlacement* jp = pl.find(row.job);
      row.age += 360;
      row.current.reset();
      if (jp) {
        const JobAllocation* ja = a.find(row.job);
        row.current = ja->config;
        double rate = 0;
        for (const auto& e : row.fixed) {
          if (e.config == *ja->config) rate = e.raw_goodput;
        }
        row.progress->done += rate * 360;
      }
      if (row.progress->done < row.progress->total) next.push_back(row);
    }
    w.jobs = std::move(next);
    prev = std::move(a);
    prev_place = std::move(pl);
  }
}

}  // namespace

TEST_CASE("themis: capacity, gangs and placement hold on random inputs", "[themis]") {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    World w = random_world(rng, false);
    PolicyOptions o = options(std::uniform_int_distribution<int>(0, 4)(rng) * 0.25, 600, 360);
    o.seed = trial;
    o.use_glpk = trial % 4 != 0;  // the greedy fallback keeps the constraints too
    auto p = make_themis_policy(o);
    run_rounds(w, *p, 12, [&](const GoodputMatrix& m, const Allocation& a, const Placement& pl) {
      INFO("trial " << trial << ", " << a.note);
      REQUIRE(a.jobs.size() == m.jobs.size());
      REQUIRE(std::is_sorted(a.jobs.begin(), a.jobs.end(),
                             [](const auto& x, const auto& y) { return x.job < y.job; }));
      std::vector<int> used(m.cluster.types.size(), 0);
      for (std::size_t i = 0; i < m.jobs.size(); ++i) {
        const JobAllocation& ja = a.jobs[i];
        REQUIRE(ja.job == m.jobs[i].job);
        if (!ja.config) {
          CHECK_FALSE(ja.reason.empty());
          continue;
        }
        // The whole gang, in one of the job's tuned configurations.
        bool tuned = false;
        for (const auto& e : m.jobs[i].fixed) tuned |= e.config == *ja.config;
        CHECK(tuned);
        CHECK(ja.config->gpus == m.jobs[i].fixed_gpus);
        used[ja.config->type] += ja.config->gpus;
      }
      for (std::size_t t = 0; t < used.size(); ++t) CHECK(used[t] <= m.cluster.types[t].capacity());
      CHECK(pl.waiting.empty());
      CHECK(a.status != "infeasible");
    });
  }
}

TEST_CASE("themis: no GPU idles while a waiting gang fits (one-GPU nodes)", "[themis]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    World w = random_world(rng, true);
    PolicyOptions o = options(0.8, 600, 360);
    o.seed = trial;
    auto p = make_themis_policy(o);
    run_rounds(w, *p, 10, [&](const GoodputMatrix& m, const Allocation& a, const Placement&) {
      INFO("trial " << trial << ", " << a.note);
      std::vector<int> free(m.cluster.types.size());
      for (std::size_t t = 0; t < free.size(); ++t) free[t] = m.cluster.types[t].capacity();
      for (const auto& ja : a.jobs) {
        if (ja.config) free[ja.config->type] -= ja.config->gpus;
      }
      for (std::size_t i = 0; i < m.jobs.size(); ++i) {
        if (a.jobs[i].config) continue;
        for (const auto& e : m.jobs[i].fixed) {
          INFO(m.jobs[i].job << " waits: " << a.jobs[i].reason);
          CHECK(e.config.gpus > free[e.config.type]);
        }
      }
    });
  }
}

TEST_CASE("themis: deterministic for a seed", "[themis]") {
  for (unsigned seed : {1u, 2u}) {
    std::mt19937 rng(21);
    World w = random_world(rng, false);
    std::vector<std::string> first, second;
    PolicyOptions o = options(0.5, 600, 360);
    o.seed = seed;
    auto p1 = make_themis_policy(o);
    run_rounds(w, *p1, 8, [&](const GoodputMatrix&, const Allocation& a, const Placement&) {
      first.push_back(dump(a));
    });
    auto p2 = make_themis_policy(o);
    run_rounds(w, *p2, 8, [&](const GoodputMatrix&, const Allocation& a, const Placement&) {
      second.push_back(dump(a));
    });
    CHECK(first == second);
  }
}

TEST_CASE("themis: policy_state carries a round to a fresh policy", "[themis]") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    World w = random_world(rng, false);
    PolicyOptions o = options(0.5, 600, 360);
    o.seed = 9;
    auto continuing = make_themis_policy(o);
    std::optional<Allocation> prev;
    run_rounds(
        w, *continuing, 6, [&](const GoodputMatrix& m, const Allocation& a, const Placement&) {
          if (prev) {
            // Through the document, as sia-solve --previous reads it.
            Allocation back = parse_allocation(
                parse_documents(dump_document("Allocation", {}, allocation_to_json(*prev), false),
                                "a.json", {"Allocation"})
                    .front()
                    .data());
            REQUIRE(back.policy_state == prev->policy_state);
            auto fresh = make_themis_policy(o);
            Allocation b = fresh->allocate(m, back);
            CHECK(dump(b) == dump(a));
          }
          prev = a;
        });
  }
}

TEST_CASE("themis: knobs are checked", "[themis]") {
  auto status = [](PolicyOptions o) {
    return test::error_of([&] { make_policy("themis", o); }).first;
  };
  CHECK(status(options()) == 0);
  CHECK(status(options(1.5)) == 64);
  CHECK(status(options(-0.1)) == 64);
  CHECK(status(options(0.8, 0)) == 64);
  auto p = make_policy("themis", {});
  CHECK(p->name() == "themis");
  CHECK(test::error_of([] {
          auto q = make_themis_policy({});
          q->allocate(matrix_of(cluster_with({{"t4", 4, 1}}), {}), [] {
            Allocation a;
            a.policy = "themis";
            a.policy_state = "{\"round\": \"x\"}";
            return a;
          }());
        }).first == 65);
}

// Found by fuzz/document (an Allocation given back to the policy that wrote it, as
// sia-solve --previous does): counts of 1e300 in the state were cast to int and long long.
TEST_CASE("themis: a policy_state with numbers out of range is bad data", "[themis]") {
  auto previous = [](const std::string& state) {
    Allocation a;
    a.policy = "themis";
    a.policy_state = state;
    return a;
  };
  for (const auto& [state, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"round":1e300,"jobs":{}})", "policy_state.round"},
           {R"({"round":3,"jobs":{"a":{"contention_sum":1,"rounds":1e300}}})",
            "policy_state.jobs.a.rounds"},
           {R"({"round":3,"jobs":{"a":{"contention_sum":1,"rounds":2,"lease":{"gpu_type":"t4",)"
            R"("nodes":1e300,"gpus":1,"start":0,"end":1,"payment":1,"how":"auction"}}}})",
            "policy_state.jobs.a.lease.nodes"},
           {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]"
            "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
            "policy_state"}}) {
    auto e = test::error_of([&] {
      make_themis_policy({})->allocate(matrix_of(cluster_with({{"t4", 4, 1}}), {}),
                                       previous(state));
    });
    CHECK(e.first == 65);
    CHECK(e.second.find(field) != std::string::npos);
  }
}

TEST_CASE("themis: the simulator runs a small workload to the end", "[themis]") {
  Catalog catalog(test::catalog_dir());
  const Cluster cluster = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  auto w = read_workload(test::source_dir() + "/tests/data/workload-tiny.csv", catalog);
  SimOptions o;
  o.policy = "themis";
  o.fairness = false;
  SimResult a = simulate(cluster, catalog, w, o);
  SimResult b = simulate(cluster, catalog, w, o);
  REQUIRE(a.jobs.size() == w.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    CHECK(a.jobs[i].jct > 0);
    CHECK(a.jobs[i].jct == b.jobs[i].jct);
  }
  CHECK(a.round == 360);
}

// ---------------------------------------------------------------------------------------
// Multi-job apps (Themis §4.3.2).

TEST_CASE("themis: a search's trials bid as one app, N counts apps", "[themis][app]") {
  const Cluster c = cluster_with({{"t4", 4, 2}});
  // Four 2-GPU trials of a search in its first of 3 phases (eta 2), and a 4-GPU job that
  // has waited longer. Two apps: N = 2 for every row, trials included.
  std::vector<GoodputRow> rows;
  for (int i = 0; i < 4; ++i) {
    GoodputRow r = gang_job(c, "s-" + std::to_string(i), 2, {1.0}, 100, 0, 800);
    r.app = AppRef{"s", 4, 2, 3, 0};
    rows.push_back(r);
  }
  rows.push_back(gang_job(c, "J", 4, {1.0}, 5000, 0, 1000));
  auto p = make_themis_policy(options(0.8));
  Allocation a = p->allocate(matrix_of(c, rows), std::nullopt);
  json s = state_of(a);
  CHECK(s["jobs"]["s-0"]["contention_sum"] == 2.0);
  CHECK(s["jobs"]["J"]["contention_sum"] == 2.0);
  // Of the two units (f = 0.8: one bids) J is further from fair and wins its gang; the
  // app takes the other node as a leftover, trial by trial.
  REQUIRE(config_of(a, "J"));
  CHECK(s["jobs"]["J"]["lease"]["how"] == "auction");
  int trials_running = 0;
  for (int i = 0; i < 4; ++i) trials_running += config_of(a, "s-" + std::to_string(i)).has_value();
  CHECK(trials_running == 2);

  // With f = 0 both units bid; the app's bids hold several trials at once (one bid, one
  // rho for the app), and the offer of 8 GPUs is shared with no GPU idle.
  auto q = make_themis_policy(options(0));
  Allocation b = q->allocate(matrix_of(c, rows), std::nullopt);
  int gpus = 0;
  for (const auto& ja : b.jobs) gpus += ja.config ? ja.config->gpus : 0;
  CHECK(gpus == 8);
  int won = 0;
  json t = state_of(b);
  for (int i = 0; i < 4; ++i) {
    const json& j = t["jobs"]["s-" + std::to_string(i)];
    if (j.contains("lease") && j["lease"]["how"] == "auction") ++won;
  }
  CHECK(won >= 1);
}
