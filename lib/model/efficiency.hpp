// Statistical efficiency from the gradient noise scale (McCandlish et al.; Pollux §3.1).
// With k = B / B0, sqr = |E[g]|^2 and var = tr(Var[g]) measured at the job's batch size:
//   gain(B)       = (var + sqr) / (var / k + sqr)      (1 when the denominator is <= 0)
//   efficiency(B) = gain(B) / k
// gain is the progress one step at B makes, in steps at B0. Without gradient statistics
// the gain is taken as 1 (no credit for larger batches: the pessimistic choice).
// Thread-safety: pure functions.
#pragma once

#include <optional>

#include "core/profile.hpp"

namespace sia {

// Inline: goodput optimisation evaluates it for every candidate batch.
inline double batch_gain(const std::optional<GradientStats>& g, double batch_size,
                         double init_batch_size) {
  if (!g) return 1.0;
  const double k = batch_size / init_batch_size;
  const double denom = g->var / k + g->sqr;
  if (denom <= 0) return 1.0;
  return (g->var + g->sqr) / denom;
}

inline double batch_efficiency(const std::optional<GradientStats>& g, double batch_size,
                               double init_batch_size) {
  return batch_gain(g, batch_size, init_batch_size) * init_batch_size / batch_size;
}

}  // namespace sia
