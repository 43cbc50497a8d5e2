// Gradient statistics as Pollux measures them (its gradient noise scale estimator): from n
// micro-batch gradients g_1..g_n (one per replica and accumulation micro-step, each the mean
// over local_bsz samples) and their mean g,
//   local_sqr = mean_i |g_i|^2,   total_sqr = |g|^2,
//   grad_sqr  = (n * total_sqr - local_sqr) / (n - 1)            unbiased |E[g]|^2
//   grad_var  = (local_sqr - total_sqr) * scale / (n - 1)         tr(Var[g]) at batch B0
// with scale = n * local_bsz / B0, so grad_var is the variance of a gradient over B0 samples
// (the convention of sia-estimate's gain (var + sqr) / (var / k + sqr), k = B / B0). With a
// single gradient per step (one replica, no accumulation) two consecutive steps' gradients
// make the pair (a "biased" estimate: the parameters moved in between). The per-step values
// are smoothed by an exponential average with factor 0.999^scale and bias correction;
// switching from pair to replica estimates restarts the average.
// Thread-safety: plain values.
#pragma once

#include <optional>

#include "core/profile.hpp"

namespace sia::worker {

struct GradientSample {
  double sqr = 0;
  double var = 0;
};

// One step's raw estimate; count >= 2.
GradientSample estimate_gradient(double local_sqr, double total_sqr, int count, double scale);

class GradientNoiseScale {
 public:
  struct State {
    double sqr_biased = 0, sqr_unbias = 0;
    double var_biased = 0, var_unbias = 0;
    bool pair = false;  // the averages come from consecutive-step pairs
  };

  // A step with count >= 2 micro-gradients (replicas x micro-steps).
  void update(double local_sqr, double total_sqr, int count, double scale);
  // A step with one gradient: prev_sqr = |g_prev|^2, cur_sqr = |g|^2, pair_sqr =
  // |(g + g_prev) / 2|^2; scale_each = local_bsz / B0.
  void update_pair(double prev_sqr, double cur_sqr, double pair_sqr, double scale_each);
  // A single-gradient step without a previous gradient (the first after a start).
  void note_unpaired() { state_.pair = true; }

  // The smoothed estimate (grad_sqr >= 0, grad_var >= 1e-6), once there is one.
  std::optional<GradientStats> estimate() const;
  // Progress of one step at `batch`, in steps at B0: (var + sqr) / (var / k + sqr).
  double gain(double batch, double init_batch) const;

  const State& state() const { return state_; }
  void set_state(const State& s) { state_ = s; }

 private:
  void add(GradientSample s, double scale);
  State state_;
};

}  // namespace sia::worker
