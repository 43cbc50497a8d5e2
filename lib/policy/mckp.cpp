#include "policy/mckp.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "policy/mckp_steps.hpp"

namespace sia {

using namespace mckp_detail;

double mckp_value(const MckpProblem& p, const std::vector<int>& pick) {
  double v = 0;
  for (std::size_t j = 0; j < pick.size(); ++j) {
    if (pick[j] >= 0) v += p.jobs[j][pick[j]].value;
  }
  return v;
}

bool mckp_feasible(const MckpProblem& p, const std::vector<int>& pick) {
  std::vector<double> used(p.capacity.size(), 0.0);
  for (std::size_t j = 0; j < pick.size(); ++j) {
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0 && pick[j] != f) return false;
    if (pick[j] < 0) continue;
    for (auto [row, amount] : p.jobs[j][pick[j]].usage) used[row] += amount;
  }
  for (std::size_t k = 0; k < used.size(); ++k) {
    if (used[k] > p.capacity[k] + 1e-9) return false;
  }
  return true;
}

namespace {

// The exact programme for targets below the dual bound `top` (see solve_mckp), within
// the work budget of the problem's size; absent when it gave up on size or work.
std::optional<DpResult> exact_dp_below(const Reduced& r, const std::vector<double>& price,
                                       double top, std::size_t columns, const MckpOptions& options,
                                       bool dbg) {
  const std::size_t budget =
      columns > options.large_columns ? options.dp.large_work : options.dp.work;
  std::size_t work = 0;
  std::optional<DpResult> solved;
  for (double drop = std::max(1e-3 * std::fabs(top), 1e-9);; drop *= 2) {
    const double target = std::max(0.0, top - drop);
    DpResult d = exact_dp(r, price, target, {options.dp.states, budget - work});
    work += d.work;
    if (d.solved) {
      solved = std::move(d);
      break;
    }
    // Gave up on size or work (a failed target costs its work, never none).
    if (target <= 0 || d.work == 0 || work >= budget) break;
  }
  if (dbg) std::fprintf(stderr, "mckp: dp work %zu\n", work);
  return solved;
}

}  // namespace

MckpSolution solve_mckp(const MckpProblem& problem, const MckpOptions& options) {
  const auto t0 = Clock::now();
  MckpSolution sol;
  const std::size_t n = problem.jobs.size();
  sol.pick.assign(n, -1);
  for (std::size_t j = 0; j < n && j < problem.forced.size(); ++j) sol.pick[j] = problem.forced[j];
  Reduced r = reduce(problem);
  if (!r.forced_feasible) {
    sol.status = "infeasible";
    sol.method = "none";
    sol.value = mckp_value(problem, sol.pick);
    sol.bound = sol.value;
    return sol;
  }
  auto finish = [&](const std::vector<int>& pick) {
    for (std::size_t j = 0; j < pick.size(); ++j) {
      sol.pick[r.job[j]] = pick[j] >= 0 ? r.index[j][pick[j]] : -1;
    }
    sol.value = mckp_value(problem, sol.pick);
  };
  const double time_limit = options.limits.seconds;  // infinity: none
  Heuristic h = lagrangian(r, t0, time_limit);
  if (h.no_row_binds) {
    finish(h.pick);
    sol.bound = sol.value;
    sol.status = "optimal";
    sol.method = "lagrangian";  // the picks at prices of zero
    sol.prices = h.price;
    return sol;
  }
  const bool dbg = std::getenv("SIA_MCKP_DEBUG") != nullptr;
  const double bound0 = h.bound + r.forced_value;
  double bound = bound0;
  auto trace = [&](const char* what, const std::vector<int>& pk) {
    if (!dbg) return;
    double v = reduced_value(r, pk);
    std::fprintf(stderr, "mckp: %-10s value %.6f bound %.6f gap %.2e at %.1f ms\n", what, v, bound,
                 relative_gap(v, bound), 1e3 * seconds_since(t0));
  };
  std::vector<int> pick = h.pick;
  trace("prices", pick);
  double value = 0;
  bool proved = false;  // the exact programme or branch and cut closed the gap
  sol.method = "lagrangian";
  sol.prices = h.price;
  auto left = [&] { return time_limit - seconds_since(t0); };
  std::size_t columns = 0;
  for (const auto& cs : r.choices) columns += cs.size();
  // A small problem: the exact programme, first for a target just below the dual bound,
  // lowered twofold each time nothing is worth it (down to nothing at all, which the
  // empty pick is worth): its work grows with the distance from the bound, and the optimum
  // is usually within a few thousandths of it.
  if (options.dp.states > 0) {
    if (std::optional<DpResult> d =
            exact_dp_below(r, h.price, bound - r.forced_value, columns, options, dbg)) {
      pick = d->pick;
      value = d->value + r.forced_value;
      bound = value;
      proved = true;
      sol.method = "dp";
      trace("dp", pick);
    }
  }
  if (!proved) {
    repair_and_improve(r, pick);
    trace("repair", pick);
    repack_rows(r, pick, h.price);
    trace("repack", pick);
    repair_and_improve(r, pick);
    trace("greedy", pick);
    value = reduced_value(r, pick);
    if (options.core_dp.states > 0 && relative_gap(value, bound) > options.mip_gap &&
        improve_core(r, pick, h.price, {options.core_dp.states, options.core_dp.work})) {
      trace("core", pick);
      value = reduced_value(r, pick);
      sol.method = "core";
    }
  }
  // LP rounding: on every column when the LP is small (its optimum is then also the best
  // bound), else on the columns the prices leave in play; above large_columns only while
  // the gap is above large_gap.
  const bool small = columns <= options.full_lp_columns;
  std::unique_ptr<GlpkModel> whole_lp;  // the whole problem's LP, solved by the rounding
  if (options.use_glpk && relative_gap(value, bound) > options.mip_gap && left() > 0.002 &&
      (columns <= options.large_columns || relative_gap(value, bound) > options.large_gap)) {
    std::vector<int> rounded;
    const bool full = small;
    const double slack =
        full ? std::numeric_limits<double>::infinity()
             : 1e-2 * std::max(1.0, std::fabs(bound0) / std::max<std::size_t>(1, r.choices.size()));
    double lp = 0;
    // round_time is a wall-clock bound too: without a time limit only the work limits apply.
    const double round_seconds =
        std::isfinite(time_limit) ? std::min(left(), options.round_time) : left();
    if (lp_round(r, h.price, slack, round_seconds, options.limits, options.core_size, rounded, &lp,
                 &whole_lp)) {
      if (full) bound = std::min(bound, lp + r.forced_value);
      repair_and_improve(r, rounded);
      repack_rows(r, rounded, h.price);
      repair_and_improve(r, rounded);
      trace("lp-round", rounded);
      double v = reduced_value(r, rounded);
      if (v > value) {
        value = v;
        pick = rounded;
        sol.method = "lp-round";
      }
    }
  }
  // Branch and cut, where it can still pay off within the time limit.
  const double gap_before = relative_gap(value, bound);
  if (options.use_glpk && gap_before > options.mip_gap && left() > 0.002 &&
      columns <= options.branch_columns &&
      (columns <= options.large_columns || gap_before > options.large_gap)) {
    // On a large problem the search ends as soon as its open nodes prove large_gap.
    const bool large = columns > options.large_columns;
    const ProveGap prove{std::max(options.mip_gap, options.large_gap), r.forced_value};
    BranchResult g = branch_and_cut(r, pick, options.mip_gap,
                                    std::min(left(), options.branch_time_fraction * time_limit),
                                    options.limits, std::move(whole_lp), large ? &prove : nullptr);
    bound = std::min(bound, g.bound + r.forced_value);
    proved = g.optimal && !large;  // a large problem's proof is of large_gap, not mip_gap
    sol.node_limit = g.node_limit;
    if (g.found && g.value + r.forced_value >= value - 1e-12) {
      pick = g.pick;
      value = g.value + r.forced_value;
      sol.method = "glpk";
    }
    trace("glpk", pick);
  }
  const double gap = relative_gap(value, bound);
  sol.status = proved || gap <= options.mip_gap + 1e-12 ? "optimal"
               : left() <= 0.002                        ? "time-limit"
                                                        : "feasible";
  finish(pick);
  sol.bound = std::max(bound, sol.value);
  sol.gap = relative_gap(sol.value, sol.bound);
  return sol;
}

MckpSolution solve_mckp_brute_force(const MckpProblem& p) {
  MckpSolution best;
  const std::size_t n = p.jobs.size();
  std::vector<int> pick(n, -1);
  best.value = -std::numeric_limits<double>::infinity();
  std::function<void(std::size_t)> rec = [&](std::size_t j) {
    if (j == n) {
      if (mckp_feasible(p, pick)) {
        double v = mckp_value(p, pick);
        if (v > best.value) {
          best.value = v;
          best.pick = pick;
        }
      }
      return;
    }
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0) {
      pick[j] = f;
      rec(j + 1);
      return;
    }
    for (int c = -1; c < static_cast<int>(p.jobs[j].size()); ++c) {
      pick[j] = c;
      rec(j + 1);
    }
    pick[j] = -1;
  };
  rec(0);
  best.bound = best.value;
  best.status = best.pick.empty() ? "infeasible" : "optimal";
  best.method = "brute-force";
  return best;
}

}  // namespace sia
