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

double batch_gain(const std::optional<GradientStats>& g, double batch_size, double init_batch_size);
double batch_efficiency(const std::optional<GradientStats>& g, double batch_size,
                        double init_batch_size);

}  // namespace sia
