#include "sim/ground_truth.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/error.hpp"

namespace sia {

GroundTruth::GroundTruth(const ModelInfo& model, const ModelGpu& gpu) : model_(&model), gpu_(&gpu) {
  for (const auto& r : gpu.placements) {
    by_placement_[r.placement].push_back({r.local_bsz, r.step_time, r.sync_time});
    auto& m = max_local_by_replicas_[r.replicas];
    m = std::max(m, r.local_bsz);
  }
  for (auto& [id, rows] : by_placement_) {
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.bsz < b.bsz; });
  }
}

// Points for placements never profiled: the placement rows averaged per (nodes, replicas,
// local batch), in key order, then every scalability row. Built on the first such
// placement: most simulations never ask for one, and the triangulation is the costly part
// of a ground truth. Called with memo_mu_ held.
const LinearInterpolator3* GroundTruth::interpolator() {
  if (interp_built_) return interp_.get();
  interp_built_ = true;
  std::map<std::tuple<int, int, int>, std::array<double, 3>> mean;  // sum step, sum sync, n
  for (const auto& r : gpu_->placements) {
    auto& m = mean[{r.nodes, r.replicas, r.local_bsz}];
    m[0] += r.step_time;
    m[1] += r.sync_time;
    m[2] += 1;
  }
  std::vector<std::array<double, 3>> pts;
  std::vector<std::array<double, 2>> vals;
  for (const auto& [k, m] : mean) {
    pts.push_back({double(std::get<0>(k)), double(std::get<1>(k)), double(std::get<2>(k))});
    vals.push_back({m[0] / m[2], m[1] / m[2]});
  }
  for (const auto& r : gpu_->scalability) {
    pts.push_back({double(r.nodes), double(r.replicas), double(r.local_bsz)});
    vals.push_back({r.step_time, r.sync_time});
  }
  // Too few or flat measurements (e.g. one node size only) give no tetrahedra: then only
  // profiled placements can be simulated, and others are reported as out of range.
  if (pts.size() >= 4) {
    try {
      interp_ = std::make_unique<LinearInterpolator3>(pts, vals);
    } catch (const Error&) {
      interp_.reset();
    }
    if (interp_ && interp_->simplices() == 0) interp_.reset();
  }
  return interp_.get();
}

static std::string placement_text(const std::vector<int>& p) {
  std::string s = "[";
  for (std::size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
  return s + "]";
}

StepSync GroundTruth::step_sync(const std::vector<int>& placement, int local_bsz) {
  const std::string id = placement_id(placement);
  auto key = std::make_pair(id, local_bsz);
  std::lock_guard<std::mutex> lock(memo_mu_);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  auto fail = [&](const std::string& why) -> StepSync {
    throw Error(ExitStatus::data, "ground truth for " + model_->name + " on " + gpu_->name +
                                      ", placement " + placement_text(placement) +
                                      ", local batch " + std::to_string(local_bsz) + ": " + why);
  };
  StepSync out;
  if (auto it = by_placement_.find(id); it != by_placement_.end()) {
    const auto& rows = it->second;
    if (local_bsz < rows.front().bsz || local_bsz > rows.back().bsz) {
      return fail("outside the profiled batch range [" + std::to_string(rows.front().bsz) + ", " +
                  std::to_string(rows.back().bsz) + "]");
    }
    auto hi = std::lower_bound(rows.begin(), rows.end(), local_bsz,
                               [](const Row& r, int b) { return r.bsz < b; });
    if (hi->bsz == local_bsz) {
      out = {hi->step, hi->sync};
    } else {
      auto lo = hi - 1;
      double t = double(local_bsz - lo->bsz) / (hi->bsz - lo->bsz);
      out = {lo->step + t * (hi->step - lo->step), lo->sync + t * (hi->sync - lo->sync)};
    }
  } else {
    int nodes = 0, replicas = 0;
    for (int g : placement) {
      if (g > 0) {
        ++nodes;
        replicas += g;
      }
    }
    const LinearInterpolator3* interp = interpolator();
    if (!interp) return fail("no measurements to interpolate from");
    auto v =
        interp->interpolate({double(std::min(nodes, 16)), double(replicas), double(local_bsz)});
    if (!v) return fail("outside the convex hull of the measurements");
    out = {(*v)[0], (*v)[1]};
  }
  if (!(out.step > 0) || !std::isfinite(out.step) || !std::isfinite(out.sync)) {
    return fail("interpolation gave no usable time");
  }
  memo_[key] = out;
  return out;
}

int GroundTruth::max_local_bsz(const std::vector<int>& placement) const {
  const std::string id = placement_id(placement);
  if (auto it = by_placement_.find(id); it != by_placement_.end()) return it->second.back().bsz;
  int nodes = 0, replicas = 0;
  for (int g : placement) {
    if (g > 0) {
      ++nodes;
      replicas += g;
    }
  }
  int best = 0;
  for (const auto& r : gpu_->scalability) {
    if (r.nodes >= nodes && r.replicas >= replicas) best = std::max(best, r.local_bsz);
  }
  if (best == 0) {
    throw Error(ExitStatus::data, "ground truth for " + model_->name + " on " + gpu_->name +
                                      ": no memory limit known for placement " +
                                      placement_text(placement));
  }
  return best;
}

int GroundTruth::max_local_for_replicas(int replicas) const {
  auto it = max_local_by_replicas_.find(replicas);
  return it == max_local_by_replicas_.end() ? 0 : it->second;
}

ValidationTruth::ValidationTruth(const ModelInfo& model) : model_(&model) {
  for (int e = 0; e <= model.max_epochs; ++e) progress_.push_back(model.progress_at_epoch(e));
}

double ValidationTruth::progress_at(int epochs) const {
  if (epochs < 0) return 0;
  if (epochs >= static_cast<int>(progress_.size())) return progress_.back();
  return progress_[epochs];
}

GradientStats ValidationTruth::grad_stats(double batch_size, int epoch) const {
  const auto& v = model_->validation;
  const ValidationTable* lo = nullptr;
  const ValidationTable* hi = nullptr;
  for (const auto& t : v) {
    if (t.batch_size <= batch_size) lo = &t;
    if (t.batch_size >= batch_size) {
      hi = &t;
      break;
    }
  }
  if (!lo || !hi) {
    throw Error(ExitStatus::software, model_->name + ": batch size " + std::to_string(batch_size) +
                                          " is outside the validated range");
  }
  auto row = [&](const ValidationTable* t) -> const EpochRow& {
    if (epoch < 0 || epoch >= static_cast<int>(t->epochs.size())) {
      throw Error(ExitStatus::software,
                  model_->name + ": no gradient statistics for epoch " + std::to_string(epoch));
    }
    return t->epochs[epoch];
  };
  const EpochRow& a = row(lo);
  const EpochRow& b = row(hi);
  if (lo == hi) return {a.grad_sqr, a.grad_var};
  double w = hi->batch_size - lo->batch_size;
  double x = batch_size - lo->batch_size, y = hi->batch_size - batch_size;
  return {(x * b.grad_sqr + y * a.grad_sqr) / w, (x * b.grad_var + y * a.grad_var) / w};
}

GroundTruth* TruthStore::truth(const ModelInfo& model, const std::string& gpu_type) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(model.name, gpu_type);
  auto it = truths_.find(key);
  if (it == truths_.end()) {
    const ModelGpu* g = model.gpu(gpu_type);
    it = truths_.emplace(key, g ? std::make_unique<GroundTruth>(model, *g) : nullptr).first;
  }
  return it->second.get();
}

const ValidationTruth& TruthStore::validation(const ModelInfo& model) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& v = validation_[model.name];
  if (!v) v = std::make_unique<ValidationTruth>(model);
  return *v;
}

}  // namespace sia
