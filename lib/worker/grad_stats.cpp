#include "worker/grad_stats.hpp"

#include <algorithm>
#include <cmath>

namespace sia::worker {

GradientSample estimate_gradient(double local_sqr, double total_sqr, int count, double scale) {
  const double n = count;
  return {(n * total_sqr - local_sqr) / (n - 1), (local_sqr - total_sqr) * scale / (n - 1)};
}

void GradientNoiseScale::add(GradientSample s, double scale) {
  if (!std::isfinite(s.sqr) || !std::isfinite(s.var)) return;  // skip a diverged step
  const double theta = std::pow(0.999, scale);
  state_.sqr_biased = theta * state_.sqr_biased + (1 - theta) * s.sqr;
  state_.sqr_unbias = theta * state_.sqr_unbias + (1 - theta);
  state_.var_biased = theta * state_.var_biased + (1 - theta) * s.var;
  state_.var_unbias = theta * state_.var_unbias + (1 - theta);
}

void GradientNoiseScale::update(double local_sqr, double total_sqr, int count, double scale) {
  if (count < 2) return;
  if (state_.pair) state_ = State{};  // replica estimates replace the pair estimates
  add(estimate_gradient(local_sqr, total_sqr, count, scale), scale);
}

void GradientNoiseScale::update_pair(double prev_sqr, double cur_sqr, double pair_sqr,
                                     double scale_each) {
  state_.pair = true;
  const double scale = 2 * scale_each;
  add(estimate_gradient((prev_sqr + cur_sqr) / 2, pair_sqr, 2, scale), scale);
}

std::optional<GradientStats> GradientNoiseScale::estimate() const {
  if (state_.sqr_unbias <= 0 || state_.var_unbias <= 0) return std::nullopt;
  GradientStats g;
  g.sqr = std::max(state_.sqr_biased / state_.sqr_unbias, 0.0);
  g.var = std::max(state_.var_biased / state_.var_unbias, 1e-6);
  return g;
}

double GradientNoiseScale::gain(double batch, double init_batch) const {
  auto g = estimate();
  if (!g || init_batch <= 0) return 1.0;
  const double k = batch / init_batch;
  const double denom = g->var / k + g->sqr;
  return denom > 0 ? (g->var + g->sqr) / denom : 1.0;
}

}  // namespace sia::worker
