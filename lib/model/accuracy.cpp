#include "model/accuracy.hpp"

#include <algorithm>
#include <cmath>

#include "model/fit.hpp"

namespace sia {

double nearest_rank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(std::ceil(q / 100.0 * v.size()));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

double AccuracyResult::median() const {
  return nearest_rank(errors, 50);
}
double AccuracyResult::p90() const {
  return nearest_rank(errors, 90);
}

namespace {

std::vector<FitPoint> points(const ModelGpu& g, int max_replicas) {
  std::vector<FitPoint> out;
  for (const auto& r : g.placements) {
    if (r.replicas > max_replicas) continue;
    out.push_back({r.nodes, r.replicas, static_cast<double>(r.local_bsz),
                   std::max(r.step_time - r.sync_time, 1e-9), r.step_time});
  }
  return out;
}

double rel(double predicted, double measured) {
  return std::fabs(predicted - measured) / measured;
}

}  // namespace

std::vector<AccuracyResult> fit_accuracy(const ModelInfo& m) {
  std::vector<AccuracyResult> out;
  for (const auto& g : m.gpus) {
    if (g.pipeline_stages > 1) continue;
    auto train = points(g, 2);
    if (train.empty()) continue;
    AccuracyResult r;
    r.model = m.name;
    r.gpu_type = g.name;
    r.fit_points = static_cast<int>(train.size());
    PerfParams p = fit_perf_params(train);
    for (const auto& row : g.placements) {
      if (row.replicas <= 2) continue;
      r.errors.push_back(rel(optim_time(p, row.nodes, row.replicas, row.local_bsz), row.step_time));
    }
    if (!r.errors.empty()) out.push_back(std::move(r));
  }
  return out;
}

AccuracyResult bootstrap_accuracy(const ModelInfo& m, const std::string& source,
                                  const std::string& target, bool linear) {
  AccuracyResult r;
  r.model = m.name;
  r.gpu_type = target;
  r.source = linear ? "" : source;
  const ModelGpu* s = m.gpu(source);
  const ModelGpu* t = m.gpu(target);
  if (!t || (!s && !linear)) return r;
  auto single = points(*t, 1);
  auto shape = linear ? single : points(*s, 2);
  if (single.empty() || shape.empty()) return r;
  PerfParams pt = fit_perf_params(single);
  PerfParams ps = linear ? pt : fit_perf_params(shape);
  r.fit_points = static_cast<int>(single.size() + (linear ? 0 : shape.size()));
  for (const auto& row : t->placements) {
    if (row.replicas <= 1) continue;
    double predicted;
    if (linear) {
      predicted = optim_time(pt, row.nodes, row.replicas, row.local_bsz);
    } else {
      // Eq. 1 at equal per-GPU batch: the source's shape, scaled by the 1-GPU ratio.
      predicted = optim_time(ps, row.nodes, row.replicas, row.local_bsz) *
                  optim_time(pt, 1, 1, row.local_bsz) / optim_time(ps, 1, 1, row.local_bsz);
    }
    r.errors.push_back(rel(predicted, row.step_time));
  }
  return r;
}

}  // namespace sia
