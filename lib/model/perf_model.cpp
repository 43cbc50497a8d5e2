#include "model/perf_model.hpp"

#include <algorithm>
#include <cmath>

namespace sia {

std::array<double, 7> PerfParams::to_array() const {
  return {alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma};
}

PerfParams PerfParams::from_array(const std::array<double, 7>& a) {
  return {a[0], a[1], a[2], a[3], a[4], a[5], a[6]};
}

double compute_time(const PerfParams& p, double local_bsz) {
  return p.alpha_c + p.beta_c * local_bsz;
}

double network_time(const PerfParams& p, int nodes, int replicas) {
  const double scale = std::max(replicas - 2.0, 1e-8);
  if (nodes > 1) return p.alpha_n + p.beta_n * scale;
  if (replicas > 1) return p.alpha_r + p.beta_r * scale;
  return 1e-8 + 1e-8 * scale;
}

double optim_time(const PerfParams& p, int nodes, int replicas, double local_bsz) {
  const double tc = compute_time(p, local_bsz);
  const double tn = network_time(p, nodes, replicas);
  const double g = p.gamma;
  if (g == 1.0) return tc + tn;
  // (tc^g + tn^g)^(1/g) = hi * (1 + (lo/hi)^g)^(1/g): one pow when the smaller term is
  // negligible, and no overflow for large gamma.
  const double hi = std::max(tc, tn), lo = std::min(tc, tn);
  if (!(hi > 0)) return 0;
  const double r = std::pow(lo / hi, g);
  if (r < 1e-16) return hi;
  return hi * std::pow(1.0 + r, 1.0 / g);
}

double iteration_time(const PerfParams& p, int nodes, int replicas, double local_bsz,
                      int accum_steps) {
  return accum_steps * compute_time(p, local_bsz) + optim_time(p, nodes, replicas, local_bsz);
}

double throughput(const PerfParams& p, int nodes, int replicas, double local_bsz, int accum_steps) {
  return replicas * local_bsz * (accum_steps + 1) /
         iteration_time(p, nodes, replicas, local_bsz, accum_steps);
}

}  // namespace sia
