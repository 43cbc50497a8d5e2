// The problem under Sia's allocation ILP, stated without policy details: a multiple-choice
// knapsack. Each job picks at most one of its choices (or none); a choice has a value and
// uses some amount of a few capacity rows (one per GPU type, plus size-class rows for
// virtual nodes); a job may be forced to a choice (pins, reservations). Maximise the total
// value of the picks within every row's capacity.
//
// When every job's most valuable choice fits beside the others' (a job alone, a cluster
// with room to spare), those are the answer. Otherwise solve_mckp() first runs a
// Lagrangian method over the row prices: each job takes its best choice at current prices,
// prices move to clear each row (an exact line search per row, then one along the
// direction all of them moved in, repeated until the dual bound stops improving), then
// the picks are repaired to feasibility and improved greedily.
// This yields a feasible solution and an upper bound
// (the dual value); the LP relaxation has at most one fractional job per row, so the two
// are usually within a hair. A small problem (few enough combinations of GPUs used per
// row: MckpOptions::dp) is solved exactly by dynamic programming on the choices the prices
// leave in play instead, before the repairs, when that takes few enough steps (counted).
// After the repairs, the least settled jobs are re-decided together by that programme in
// the room the others leave (MckpOptions::core_dp).
// Otherwise, if the gap is above the target, the LP relaxation (GLPK
// simplex; on every column when small, else on the columns the prices leave in play;
// above large_columns only while the gap is above large_gap) is
// rounded, and on small problems (on mid-sized ones only while the gap is above
// large_gap, and only until it proves large_gap) GLPK's branch and cut (glp_intopt with MIR and
// Gomory cuts; presolve off, so that the heuristic solution, in our own columns, can be its first
// incumbent) runs within the node limit (and a share of the time limit, when there is one);
// it can only improve on it. With no wall-clock limit (limits.seconds infinite) every step
// is bounded by counts alone and the answer depends on the problem only. The answer is
// never "nothing". SIA_MCKP_DEBUG=1 in the environment traces the steps on stderr. The
// steps live in mckp_lagrangian.cpp, mckp_dp.cpp, mckp_core.cpp and mckp_glpk.cpp
// (declared in mckp_steps.hpp).
// Thread-safety: re-entrant (GLPK keeps no global state between calls here).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/solve_limits.hpp"

namespace sia {

struct MckpChoice {
  double value = 0;
  std::vector<std::pair<int, int>> usage;  // (row, amount)
};

struct MckpProblem {
  std::vector<double> capacity;               // per row
  std::vector<std::vector<MckpChoice>> jobs;  // choices per job
  std::vector<int> forced;                    // per job: a choice index, or -1
};

struct MckpOptions {
  double mip_gap = 1e-4;  // relative gap at which to stop
  // seconds: for the whole solve (infinity: none); iterations: per simplex solve; nodes:
  // per branch and cut (the main one and the rounding's core alike).
  SolveLimits limits{2.0, 0, 0};
  bool use_glpk = true;  // false: no GLPK (the LP rounding and branch and cut are skipped)
  // Branch and cut only below this many columns, and for at most this share of the time
  // limit: on larger problems it rarely closes the last hundredths of a percent in time;
  // the LP rounding gets within about 1e-3 there.
  std::size_t branch_columns = 3000;
  double branch_time_fraction = 0.25;
  // Above large_columns, branch and cut runs only while the gap is still above large_gap,
  // and stops once it proves large_gap: there its root alone can cost over 100 ms (256 GPUs
  // and up), and LP rounding usually gets within 1e-3, so most rounds stay short at a gap
  // of at most large_gap.
  std::size_t large_columns = 1000;
  double large_gap = 1e-3;
  // Solve the LP relaxation on every column up to this size (exact bound); above it, only
  // on the columns the Lagrangian prices leave in play.
  std::size_t full_lp_columns = 3000;
  // After the LP: how many of the least clear-cut jobs branch and cut re-decides exactly,
  // and how long that rounding step may take at most (when there is a time limit).
  int core_size = 0;
  double round_time = 0.25;
  // Small problems are solved exactly, by dynamic programming over the rows' usage on the
  // choices the Lagrangian prices leave in play, when the state space (the product over
  // rows of capacity + 1) has at most dp.states states and the programme takes at most
  // dp.work steps; the LP and branch and cut are then skipped. dp.states 0: never. Above
  // large_columns, where the other steps stop at large_gap and can take 100 ms, it may
  // take dp.large_work steps (a 256-GPU cluster of three types: 611,585 states, 0.1-6
  // million steps, 1-50 ms).
  struct {
    std::size_t states = 1 << 20;
    std::size_t work = 1 << 19;
    std::size_t large_work = 1 << 23;
  } dp;
  // Where the programme did not answer, after the repairs: the least settled jobs are
  // re-decided together by it, in the room the others leave, as many as keep that room
  // within core_dp.states combinations, in at most core_dp.work steps. states 0: never.
  struct {
    std::size_t states = 1 << 16;
    std::size_t work = 1 << 20;
  } core_dp;
};

struct MckpSolution {
  std::vector<int> pick;  // per job: choice index or -1
  double value = 0;
  double bound = 0;            // an upper bound on the optimum
  double gap = 0;              // (bound - value) / max(|value|, 1e-9)
  std::string status;          // "optimal" (within the gap), "feasible" (gap above the target),
                               // "time-limit" (the wall clock ran out), "infeasible" (the
                               // forced choices do not fit)
  std::string method;          // what found it: "lagrangian", "dp", "core", "lp-round" or "glpk"
  std::vector<double> prices;  // the final row prices (explanations)
  bool node_limit = false;     // the final branch and cut (not the rounding's core) stopped
                               // at limits.nodes (bound: the best its open nodes had)
};

MckpSolution solve_mckp(const MckpProblem& problem, const MckpOptions& options);

// Value of a pick vector, and whether it respects every row and every forced choice.
double mckp_value(const MckpProblem& problem, const std::vector<int>& pick);
bool mckp_feasible(const MckpProblem& problem, const std::vector<int>& pick);

// Exhaustive search, for tests on small instances.
MckpSolution solve_mckp_brute_force(const MckpProblem& problem);

}  // namespace sia
