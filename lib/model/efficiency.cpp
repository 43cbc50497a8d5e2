#include "model/efficiency.hpp"

namespace sia {

double batch_gain(const std::optional<GradientStats>& g, double batch_size,
                  double init_batch_size) {
  if (!g) return 1.0;
  const double k = batch_size / init_batch_size;
  const double denom = g->var / k + g->sqr;
  if (denom <= 0) return 1.0;
  return (g->var + g->sqr) / denom;
}

double batch_efficiency(const std::optional<GradientStats>& g, double batch_size,
                        double init_batch_size) {
  return batch_gain(g, batch_size, init_batch_size) * init_batch_size / batch_size;
}

}  // namespace sia
