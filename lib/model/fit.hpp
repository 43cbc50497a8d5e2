// Fits the seven throughput parameters (perf_model.hpp) of one job on one GPU type to its
// observed iteration times, as Pollux does:
//   loss = RMSE(log T_c pred, log (step - sync)) + RMSE(log T_opt pred, log step)
//        + 1e-3 (gamma - 1)^2 + 1e-2 ((beta_n / alpha_n)^2 + (beta_r / alpha_r)^2)
// from the start point (0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001) within bounds
// [1e-8, inf) (gamma in [1, 10]), with parameters the data cannot identify frozen:
//   one distinct local batch    -> alpha_c = mean(T_c) / 2
//   no multi-node observation   -> alpha_n = beta_n = 1e-8
//   no one-node, multi-GPU obs. -> alpha_r = beta_r = 1e-8
//   no observation with R > 2   -> beta_n = beta_r = 1e-8
// and, with no multi-node data, the prior alpha_n >= 1.1 alpha_r, beta_n >= 1.1 beta_r.
// The minimiser is NLopt's bounded L-BFGS on the analytic gradient (fit_loss), which is
// what libnlopt is in the build for: a tested bounded quasi-Newton method beats a
// hand-written one.
// The fit is a pure function of the points (in order), and simulations fit the same point
// sets over and over (jobs of one model measure the same ground truth; a job's isolated
// runs repeat its first measurements), so fit_perf_params memoises its results by the
// points' bytes, process-wide, at most kMaxMemoFits of them holding at most kMaxMemoBytes
// of points (emptied when full, so a long-running controller stays bounded): a cached
// fit is the fit, bit for bit.
// Thread-safety: re-entrant; the memo is guarded by a mutex (the fit runs outside it).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "model/perf_model.hpp"

namespace sia {

struct FitPoint {
  int nodes = 1;
  int replicas = 1;
  double local_bsz = 1;
  double compute_time = 0;  // step_time - sync_time (seconds per micro-step)
  double step_time = 0;     // seconds per optimizer step without accumulation
};

inline constexpr std::size_t kMaxMemoFits = 1 << 14;
inline constexpr std::size_t kMaxMemoBytes = std::size_t{16} << 20;

PerfParams fit_perf_params(const std::vector<FitPoint>& points);

// The loss above at `params`; fills `grad` (d loss / d param) when not null.
double fit_loss(const std::array<double, 7>& params, const std::vector<FitPoint>& points,
                std::array<double, 7>* grad);

}  // namespace sia
