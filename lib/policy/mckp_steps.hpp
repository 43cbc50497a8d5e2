// The steps of solve_mckp (mckp.hpp), for its own files: the reduced problem, the
// Lagrangian heuristic and the repairs of its picks (mckp_lagrangian.cpp), the exact
// programme (mckp_dp.cpp), the core step (mckp_core.cpp), and GLPK's LP rounding and
// branch and cut (mckp_glpk.cpp). Internal to lib/policy.
// Thread-safety: re-entrant functions (exact_dp keeps its per-state arrays per thread,
// between calls); a GlpkModel belongs to one thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "policy/mckp.hpp"
#include "policy/solve_limits.hpp"

struct glp_prob;

namespace sia::mckp_detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double relative_gap(double value, double bound) {
  return std::max(0.0, bound - value) / std::max(std::fabs(value), 1e-9);
}

// The free part of the problem: forced jobs removed, capacities reduced, dominated and
// oversized choices dropped. `index` maps back to the original choice numbers.
struct Reduced {
  std::vector<double> capacity;
  std::vector<int> job;  // original job of each free job
  std::vector<std::vector<const MckpChoice*>> choices;
  std::vector<std::vector<int>> total;  // each choice's usage summed over the rows
  std::vector<std::vector<int>> index;
  double forced_value = 0;
  bool forced_feasible = true;

  void add_job(int original, std::vector<const MckpChoice*> cs, std::vector<int> idx) {
    std::vector<int> sum;
    sum.reserve(cs.size());
    for (const MckpChoice* c : cs) {
      int use = 0;
      for (auto [row, amount] : c->usage) use += amount;
      sum.push_back(use);
    }
    job.push_back(original);
    choices.push_back(std::move(cs));
    total.push_back(std::move(sum));
    index.push_back(std::move(idx));
  }
};

Reduced reduce(const MckpProblem& p);
double reduced_cost(const MckpChoice& c, const std::vector<double>& price);
double reduced_value(const Reduced& r, const std::vector<int>& pick);

// The Lagrangian step: row prices that minimise the dual within 30 sweeps (and a quarter of
// `budget` seconds from t0), its bound, and the picks just above those prices. When every
// job's best choice at prices of zero (ties to the smaller) fits beside the others', it
// stops there: those picks are the optimum and no_row_binds says so (a job alone, or a
// cluster with room for every job's best).
struct Heuristic {
  std::vector<int> pick;  // per free job: local choice or -1
  std::vector<double> price;
  double bound = 0;
  bool no_row_binds = false;
};

Heuristic lagrangian(const Reduced& r, Clock::time_point t0, double budget);

// Makes `pick` feasible (dropping or shrinking the least valuable per unit freed), then
// upgrades jobs greedily into the room left.
void repair_and_improve(const Reduced& r, std::vector<int>& pick);

// Re-optimises the picks row by row: the jobs whose pick uses only row `row` (and the
// waiting jobs that have choices there) are re-packed exactly by dynamic programming over
// the row's capacity (a one-row multiple-choice knapsack), keeping every other job as is.
// Rows shared within a choice (size-class rows) are left to the greedy passes.
void repack_rows(const Reduced& r, std::vector<int>& pick, const std::vector<double>& price);

// The exact optimum of a small reduced problem when it is worth at least `target` (the
// reduced problem's value, forced jobs excluded), by dynamic programming over the rows'
// usage (the state: GPUs used per row), jobs one after the other. Only choices whose
// reduced value at `price` is within (dual bound - target) of their job's best can be in
// such a solution, and a state that can no longer reach the target (its value, the later
// jobs' best reduced values and the prices of the room it leaves) is dropped; the lower the
// target, the more work. solved false: no solution is worth the target, or the state space
// or the work exceeded `limits` (counted, so the outcome depends on the problem only). Ties
// go to the first found (none, then choice order). `work` is what it took either way.
struct DpLimits {
  std::size_t states = 0;  // state space (product over rows of capacity + 1)
  std::size_t work = 0;    // state x candidate steps
};

struct DpResult {
  bool solved = false;
  std::vector<int> pick;  // per free job: local choice or -1
  double value = 0;       // forced jobs excluded
  std::size_t work = 0;
};

DpResult exact_dp(const Reduced& r, const std::vector<double>& price, double target,
                  const DpLimits& limits);

// Re-decides the least settled jobs of a feasible `pick` exactly: jobs are taken by how
// little another choice (or waiting) loses at the prices against their best, as long as
// the room they share -- what the other jobs leave, at most what their candidates could
// use -- has at most limits.states combinations; each may keep its pick, wait, or take a
// choice losing no more than that. exact_dp then finds their best together within
// limits.work steps. True when `pick` improved (it stays feasible either way).
bool improve_core(const Reduced& r, std::vector<int>& pick, const std::vector<double>& price,
                  const DpLimits& limits);

// GLPK model of a reduced problem: one binary column per (job, choice), a row per job
// (at most one choice) and one per capacity row.
struct GlpkModel {
  glp_prob* lp = nullptr;
  std::vector<int> col_job, col_choice;
  GlpkModel() = default;
  GlpkModel(const GlpkModel&) = delete;
  GlpkModel& operator=(const GlpkModel&) = delete;
  ~GlpkModel();
};

struct BranchResult {
  bool found = false;
  bool optimal = false;     // proved within the gap
  bool node_limit = false;  // stopped at limits.nodes
  std::vector<int> pick;
  double value = 0;
  double bound = std::numeric_limits<double>::infinity();
};

// Stop a branch and cut once its open nodes prove `gap`, relative to the objective plus
// `offset` (what the caller adds to it), with a hair to spare against rounding: checked
// from the callback rather than by GLPK, so that the bound reported is the one that proved
// it.
struct ProveGap {
  double gap = 0;
  double offset = 0;
};

// Branch and cut on the whole reduced problem, from `incumbent`, within `seconds` and
// limits.nodes nodes, until GLPK's relative gap is within `gap` (or, with `prove`, until
// that is proved). `solved`: the problem's model with its LP relaxation already solved
// (what building and solving it here would give; consumed), else null.
BranchResult branch_and_cut(const Reduced& r, const std::vector<int>& incumbent, double gap,
                            double seconds, const SolveLimits& limits,
                            std::unique_ptr<GlpkModel> solved = nullptr,
                            const ProveGap* prove = nullptr);

// LP rounding with a small exact core. The LP relaxation is solved on every column, or,
// above `slack` = finite, on the choices within `slack` of each job's best reduced value at
// the Lagrangian prices (the only ones an optimal LP solution uses when those prices are
// optimal). Its basic optimum has at most one fractional job per capacity row, and its row
// duals are exact prices. Jobs whose LP choice is integral and clearly best at those prices
// keep it; the fractional jobs and the `core_size` least clear-cut ones are then decided
// exactly by branch and cut in the room the others leave. With every column (slack
// infinite) and `solved` given, the solved LP model is handed out there: it is the whole
// problem's, ready for branch and cut.
bool lp_round(const Reduced& r, const std::vector<double>& price, double slack, double seconds,
              const SolveLimits& limits, int core_size, std::vector<int>& out, double* lp_value,
              std::unique_ptr<GlpkModel>* solved);

}  // namespace sia::mckp_detail
