#include <catch2/catch.hpp>

#include <random>

#include "policy/mckp.hpp"

using namespace sia;

namespace {

MckpProblem random_problem(std::mt19937& rng, int jobs, int rows, bool pins) {
  MckpProblem p;
  std::uniform_int_distribution<int> cap(2, 12), amount(1, 6), nchoices(0, 4), row(0, rows - 1);
  std::uniform_real_distribution<double> value(-0.3, 1.5);
  for (int r = 0; r < rows; ++r) p.capacity.push_back(cap(rng));
  for (int j = 0; j < jobs; ++j) {
    std::vector<MckpChoice> cs;
    int n = nchoices(rng);
    for (int c = 0; c < n; ++c) {
      MckpChoice ch;
      ch.value = value(rng);
      ch.usage.push_back({row(rng), amount(rng)});
      if (rows > 3 && c % 3 == 0) {  // a size-class row as well
        if (ch.usage[0].first == rows - 1) {
          ch.usage[0].second += 1;
        } else {
          ch.usage.push_back({rows - 1, 1});
        }
      }
      cs.push_back(ch);
    }
    p.jobs.push_back(cs);
  }
  p.forced.assign(jobs, -1);
  if (pins) {
    // Pin a few jobs to choices that fit together.
    std::vector<double> left = p.capacity;
    for (int j = 0; j < jobs; j += 3) {
      if (p.jobs[j].empty()) continue;
      bool fits = true;
      for (auto [r, a] : p.jobs[j][0].usage) fits &= a <= left[r];
      if (!fits) continue;
      for (auto [r, a] : p.jobs[j][0].usage) left[r] -= a;
      p.forced[j] = 0;
    }
  }
  return p;
}

}  // namespace

TEST_CASE("the solver matches brute force on small instances", "[mckp]") {
  // With the exact programme (the default on problems this small), and with the LP and
  // branch and cut alone.
  for (const bool dp : {true, false}) {
    std::mt19937 rng(42);
    MckpOptions exact;
    exact.mip_gap = 0;
    exact.limits.seconds = 10;
    if (!dp) exact.dp.states = 0;
    int by_dp = 0;
    for (int trial = 0; trial < 300; ++trial) {
      int jobs = 2 + trial % 6;
      int rows = 1 + trial % 4;
      MckpProblem p = random_problem(rng, jobs, rows, trial % 2 == 1);
      MckpSolution brute = solve_mckp_brute_force(p);
      MckpSolution s = solve_mckp(p, exact);
      INFO("dp " << dp << " trial " << trial);
      REQUIRE(mckp_feasible(p, s.pick));
      CHECK(s.value == Approx(brute.value).margin(1e-9));
      CHECK(s.bound >= s.value - 1e-9);
      CHECK(s.status == "optimal");
      by_dp += s.method == "dp";
    }
    if (dp) {
      CHECK(by_dp > 100);
    } else {
      CHECK(by_dp == 0);
    }
  }
}

TEST_CASE("the exact programme: the optimum of cluster-sized problems, or it gives up", "[mckp]") {
  // Problems the size of a 64-GPU round (30 jobs, capacities 8-48 on 3-5 rows, size-class
  // rows and pins included): the programme's answer is branch and cut's proved optimum.
  std::mt19937 rng(17);
  MckpOptions glpk;
  glpk.mip_gap = 0;
  glpk.limits = SolveLimits{};
  glpk.dp.states = 0;
  int solved = 0;
  for (int trial = 0; trial < 30; ++trial) {
    MckpProblem p = random_problem(rng, 30, 3 + trial % 3, trial % 2 == 0);
    for (auto& c : p.capacity) c *= 4;
    MckpOptions o;
    o.limits = SolveLimits{};
    const MckpSolution s = solve_mckp(p, o);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, s.pick));
    if (s.method == "lagrangian" && s.gap == 0) continue;  // every best choice fitted
    if (s.method != "dp") continue;                        // beyond its limits
    ++solved;
    const MckpSolution g = solve_mckp(p, glpk);
    REQUIRE(g.status == "optimal");
    CHECK(s.value == Approx(g.value).margin(1e-9));
    CHECK(s.value >= g.value - 1e-9);
    CHECK(s.status == "optimal");
    CHECK(s.gap == Approx(0).margin(1e-12));
    for (std::size_t j = 0; j < p.forced.size(); ++j) {
      if (p.forced[j] >= 0) CHECK(s.pick[j] == p.forced[j]);
    }
    // The same problem, the same answer.
    const MckpSolution again = solve_mckp(p, o);
    CHECK(again.pick == s.pick);
    CHECK(again.value == s.value);
  }
  CHECK(solved > 5);
  // State spaces past what the programme keeps per thread (over 131,072 states), on their
  // own cells: the same optimum.
  std::mt19937 rng3(29);
  int large = 0;
  for (int trial = 0; trial < 12; ++trial) {
    MckpProblem p = random_problem(rng3, 60, 3, trial % 2 == 0);
    p.capacity = {60.0 - trial, 48, 66};  // 144,942 to 200,263 states
    MckpOptions o;
    o.limits = SolveLimits{};
    const MckpSolution s = solve_mckp(p, o);
    INFO("large trial " << trial);
    REQUIRE(mckp_feasible(p, s.pick));
    if (s.method != "dp") continue;
    ++large;
    const MckpSolution g = solve_mckp(p, glpk);
    REQUIRE(g.status == "optimal");
    CHECK(s.value == Approx(g.value).margin(1e-9));
    CHECK(s.value >= g.value - 1e-9);
  }
  CHECK(large >= 6);
  // Past its state space or its work, the other steps answer, as well as they can.
  std::mt19937 rng2(23);
  for (int trial = 0; trial < 40; ++trial) {
    MckpProblem p = random_problem(rng2, 12, 1 + trial % 3, trial % 2 == 0);
    MckpOptions o;
    o.mip_gap = 0;
    o.limits = SolveLimits{};
    if (trial % 2 == 0) {
      o.dp.states = 1;  // every capacity is at least 2
    } else {
      o.dp.work = 0;
    }
    const MckpSolution s = solve_mckp(p, o);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, s.pick));
    CHECK(s.method != "dp");
    CHECK(s.value == Approx(solve_mckp_brute_force(p).value).margin(1e-9));
  }
}

TEST_CASE("the heuristic alone is feasible and its bound is valid", "[mckp]") {
  std::mt19937 rng(7);
  MckpOptions heuristic;
  heuristic.use_glpk = false;
  for (int trial = 0; trial < 300; ++trial) {
    MckpProblem p = random_problem(rng, 3 + trial % 5, 1 + trial % 3, trial % 3 == 0);
    MckpSolution brute = solve_mckp_brute_force(p);
    MckpSolution s = solve_mckp(p, heuristic);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, s.pick));
    CHECK(s.value <= brute.value + 1e-9);
    CHECK(s.bound >= brute.value - 1e-9);  // the Lagrangian dual bounds the optimum
    for (std::size_t j = 0; j < p.forced.size(); ++j) {
      if (p.forced[j] >= 0) CHECK(s.pick[j] == p.forced[j]);
    }
  }
}

TEST_CASE("the core step re-decides the least settled jobs: feasible, never worse", "[mckp]") {
  // Without the exact programme and GLPK: the repairs alone, then with the core step.
  std::mt19937 rng(31);
  MckpOptions repairs;
  repairs.use_glpk = false;
  repairs.dp.states = 0;
  repairs.core_dp.states = 0;
  MckpOptions core = repairs;
  core.core_dp.states = 1 << 16;
  int better = 0;
  for (int trial = 0; trial < 300; ++trial) {
    MckpProblem p = random_problem(rng, 4 + trial % 5, 1 + trial % 3, trial % 3 == 0);
    const MckpSolution a = solve_mckp(p, repairs);
    const MckpSolution b = solve_mckp(p, core);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, b.pick));
    CHECK(b.value >= a.value - 1e-12);
    CHECK(b.value <= solve_mckp_brute_force(p).value + 1e-9);
    if (b.value > a.value + 1e-12) {
      ++better;
      CHECK(b.method == "core");
    }
  }
  CHECK(better >= 5);
}

TEST_CASE("pins that exceed capacity are reported as infeasible", "[mckp]") {
  MckpProblem p;
  p.capacity = {4};
  p.jobs = {{MckpChoice{1.0, {{0, 3}}}}, {MckpChoice{1.0, {{0, 3}}}}};
  p.forced = {0, 0};
  MckpSolution s = solve_mckp(p, {});
  CHECK(s.status == "infeasible");
}

TEST_CASE("larger instances: within the gap, and GLPK only improves", "[mckp]") {
  std::mt19937 rng(3);
  MckpProblem p = random_problem(rng, 400, 3, true);
  for (auto& c : p.capacity) c *= 30;
  MckpOptions h;
  h.use_glpk = false;
  MckpSolution heur = solve_mckp(p, h);
  MckpSolution full = solve_mckp(p, {});
  REQUIRE(mckp_feasible(p, full.pick));
  CHECK(full.value >= heur.value - 1e-9);
  CHECK(full.gap <= 1e-3);
}

TEST_CASE("when every job's best choice fits, those are the answer", "[mckp]") {
  std::mt19937 rng(3);
  int direct = 0;
  for (int trial = 0; trial < 100; ++trial) {
    MckpProblem p = random_problem(rng, 1 + trial % 20, 1 + trial % 5, trial % 4 == 1);
    if (trial % 2 == 0) {
      for (auto& c : p.capacity) c *= 100;  // room for everyone
    }
    const MckpSolution s = solve_mckp(p, MckpOptions{});
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, s.pick));
    // Every free job at its most valuable choice (or none, when none is worth anything).
    bool all_best = true;
    for (std::size_t j = 0; j < p.jobs.size(); ++j) {
      if (p.forced[j] >= 0) continue;
      double best = 0;
      for (const auto& c : p.jobs[j]) best = std::max(best, c.value);
      const double got = s.pick[j] >= 0 ? p.jobs[j][s.pick[j]].value : 0.0;
      all_best &= got == best;
    }
    if (trial % 2 == 0 && p.forced == std::vector<int>(p.jobs.size(), -1)) {
      CHECK(all_best);
      CHECK(s.status == "optimal");
      CHECK(s.gap == 0);
      ++direct;
    }
    if (all_best) CHECK(s.bound == Approx(s.value));
  }
  CHECK(direct > 0);
}

TEST_CASE("a node limit that binds gives the same answer on every run", "[mckp]") {
  // No wall clock, as in the simulator: the answer must depend on the problem alone.
  MckpOptions o;
  o.mip_gap = 0;
  o.limits = SolveLimits{};  // no time limit
  o.limits.nodes = 3;
  o.dp.states = 0;  // branch and cut, not the exact programme
  std::mt19937 rng(11);
  int bound_by_nodes = 0;
  for (int trial = 0; trial < 40; ++trial) {
    MckpProblem p = random_problem(rng, 60, 4, trial % 2 == 0);
    for (auto& c : p.capacity) c *= 4;
    const MckpSolution first = solve_mckp(p, o);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, first.pick));
    if (first.node_limit) ++bound_by_nodes;
    for (int rerun = 0; rerun < 3; ++rerun) {
      const MckpSolution again = solve_mckp(p, o);
      CHECK(again.pick == first.pick);
      CHECK(again.value == first.value);
      CHECK(again.bound == first.bound);
      CHECK(again.status == first.status);
      CHECK(again.node_limit == first.node_limit);
    }
  }
  // The limit must actually have cut searches short for the check above to mean anything.
  CHECK(bound_by_nodes > 0);
}

TEST_CASE("a search stopped at its node limit reports the bound it proved", "[mckp]") {
  MckpOptions limited;
  limited.mip_gap = 0;
  limited.limits = SolveLimits{};
  limited.limits.nodes = 3;
  limited.dp.states = 0;  // branch and cut, not the exact programme
  MckpOptions exact = limited;
  exact.limits.nodes = 0;
  MckpOptions lp_only = limited;  // the LP relaxation's bound, no branch and cut
  lp_only.large_columns = 0;
  lp_only.large_gap = 1;
  std::mt19937 rng(11);
  int stopped = 0, tighter = 0;
  for (int trial = 0; trial < 40; ++trial) {
    MckpProblem p = random_problem(rng, 30, 3, false);
    for (auto& c : p.capacity) c *= 3;
    const MckpSolution a = solve_mckp(p, limited);
    if (!a.node_limit) continue;
    ++stopped;
    const MckpSolution best = solve_mckp(p, exact);
    const MckpSolution lp = solve_mckp(p, lp_only);
    INFO("trial " << trial);
    CHECK(a.bound >= best.value - 1e-9);  // still a bound
    CHECK(a.bound >= a.value);
    CHECK(a.bound <= lp.bound + 1e-9);
    tighter += a.bound < lp.bound - 1e-9;
  }
  CHECK(stopped > 0);
  CHECK(tighter > 0);  // what the search proved, not the LP relaxation's bound
}

TEST_CASE("above large_columns, branch and cut runs only while the gap is above large_gap",
          "[mckp]") {
  MckpOptions o;
  o.limits = SolveLimits{};  // work limits only
  o.large_columns = 10;      // every instance below counts as large
  o.dp.states = 0;           // the LP and branch and cut, not the exact programme
  std::mt19937 rng(5);
  int skipped = 0, branched = 0;
  for (int trial = 0; trial < 30; ++trial) {
    MckpProblem p = random_problem(rng, 40, 3, false);
    for (auto& c : p.capacity) c *= 3;
    o.large_gap = 1;  // any rounding is close enough: no branch and cut
    const MckpSolution loose = solve_mckp(p, o);
    o.large_gap = 0;  // never close enough: branch and cut whenever above mip_gap
    const MckpSolution strict = solve_mckp(p, o);
    INFO("trial " << trial);
    REQUIRE(mckp_feasible(p, loose.pick));
    CHECK(loose.method != "glpk");
    CHECK(strict.value >= loose.value - 1e-9);
    if (loose.gap > o.mip_gap) {
      ++skipped;
      CHECK(loose.status == "feasible");
    }
    branched += strict.method == "glpk";
    o.large_gap = 5e-3;  // branch and cut ends once it proves 5e-3
    const MckpSolution mid = solve_mckp(p, o);
    if (mid.method == "glpk" && !mid.node_limit) CHECK(mid.gap <= 5e-3 + 1e-9);
  }
  // Both paths must have been taken for the checks to mean anything.
  CHECK(skipped > 0);
  CHECK(branched > 0);
}
