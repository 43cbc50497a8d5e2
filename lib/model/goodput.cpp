#include "model/goodput.hpp"

#include <algorithm>
#include <cmath>

#include "model/batch_candidates.hpp"
#include "model/efficiency.hpp"

namespace sia {

GoodputFunction::GoodputFunction(PerfParams params, std::optional<GradientStats> gradient,
                                 double init_batch_size, int pipeline_stages, int microbatches)
    : params_(params),
      gradient_(gradient),
      init_batch_size_(init_batch_size),
      stages_(std::max(1, pipeline_stages)),
      microbatches_(std::max(1, microbatches)) {}

void geomspace(double start, double stop, int n, double* out) {
  if (n <= 0) return;
  if (n == 1) {
    out[0] = start;
    return;
  }
  const double ls = std::log10(start), le = std::log10(stop);
  const double step = (le - ls) / (n - 1);
  for (int i = 0; i < n; ++i) out[i] = std::pow(10.0, ls + step * i);
  out[0] = start;
  out[n - 1] = stop;
}

void split_batch(double batch, int replicas, int max_local, double init_batch_size, int* local_bsz,
                 int* accum_steps) {
  const double local = batch / replicas;
  int s = static_cast<int>(std::ceil(local / max_local - 1e-8)) - 1;
  if (replicas == 1 && local > init_batch_size + 1e-8) s = std::max(s, 1);
  s = std::max(s, 0);
  *accum_steps = s;
  *local_bsz = static_cast<int>(std::ceil(local / (s + 1) - 1e-8));
}

BatchChoice GoodputFunction::evaluate(int nodes, int replicas, int local_bsz,
                                      int accum_steps) const {
  BatchChoice c;
  c.local_bsz = local_bsz;
  c.accum_steps = accum_steps;
  c.batch_size = static_cast<double>(replicas) * local_bsz * (accum_steps + 1);
  c.throughput = throughput(params_, nodes, replicas, local_bsz, accum_steps);
  c.efficiency = batch_efficiency(gradient_, c.batch_size, init_batch_size_);
  c.goodput = c.throughput * c.efficiency;
  return c;
}

BatchChoice GoodputFunction::pipeline(int nodes, int pipelines, const BatchLimits& limits) const {
  BatchChoice c;
  const int m = microbatches_;
  c.local_bsz = 1;
  c.accum_steps = m - 1;
  c.batch_size = static_cast<double>(m) * pipelines;
  if (c.batch_size > limits.max_batch + 1e-8) return c;  // goodput 0: invalid
  const double f = compute_time(params_, 1.0);
  const double iter = 3.0 * ((stages_ - 1) + m) * f + network_time(params_, nodes, pipelines);
  c.throughput = pipelines * static_cast<double>(m) / iter;
  c.efficiency = batch_efficiency(gradient_, c.batch_size, init_batch_size_);
  c.goodput = c.throughput * c.efficiency;
  return c;
}

BatchChoice GoodputFunction::optimize(int nodes, int replicas, const BatchLimits& limits) const {
  if (stages_ > 1) return pipeline(nodes, replicas, limits);
  const CandidateTable& table = candidate_table(params_, init_batch_size_, nodes, replicas, limits);
  // With no valid candidate the first one is reported (goodput 0), as Pollux does.
  BatchChoice best;
  best.local_bsz = table.first.local_bsz;
  best.accum_steps = table.first.accum_steps;
  best.batch_size = table.first.batch_size;
  for (const BatchCandidate& c : table.valid) {
    const double efficiency = batch_efficiency(gradient_, c.batch_size, init_batch_size_);
    const double goodput = c.throughput * efficiency;
    if (goodput > best.goodput) {
      best.goodput = goodput;
      best.throughput = c.throughput;
      best.efficiency = efficiency;
      best.batch_size = c.batch_size;
      best.local_bsz = c.local_bsz;
      best.accum_steps = c.accum_steps;
    }
  }
  return best;
}

BatchChoice GoodputFunction::fixed_batch(int nodes, int replicas, double batch,
                                         int max_local) const {
  BatchLimits l;
  l.max_batch = batch;
  l.min_local = 1;
  l.max_local = max_local;
  l.tune = false;
  return optimize(nodes, replicas, l);
}

}  // namespace sia
