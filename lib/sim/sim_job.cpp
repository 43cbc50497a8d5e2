#include "sim/sim_job.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "model/goodput.hpp"

namespace sia {

namespace {

// A fixed global batch on `replicas` GPUs whose local batch may be at most `max_local`
// (the published simulator's rigid split): {per-GPU batch, accumulation steps}, at least
// one accumulation step on one GPU above the initial batch, the per-GPU batch clamped so
// the global batch stays within the application's maximum.
std::pair<int, int> split_fixed(double batch, int replicas, int max_local, double init_batch,
                                double max_batch) {
  const int local = static_cast<int>(std::ceil(batch / replicas - 1e-8));
  int s = static_cast<int>(std::ceil(static_cast<double>(local) / max_local - 1e-8)) - 1;
  if (replicas == 1 && batch > init_batch) s = std::max(1, s);
  s = std::max(s, 0);
  int b = static_cast<int>(std::ceil(static_cast<double>(local) / (s + 1) - 1e-8));
  b = std::min(b, static_cast<int>(max_batch / (static_cast<double>(replicas) * (s + 1))));
  return {b, s};
}

}  // namespace

SimJobQuirks sim_job_quirks(Compat compat) {
  SimJobQuirks q;
  q.zero_restart_cost_is_30s = compat == Compat::reference;
  return q;
}

SimJob::SimJob(JobState job, const ModelInfo& model, std::vector<GroundTruth*> truth,
               const ValidationTruth& validation, const Cluster& cluster, double restart_cost,
               SimJobQuirks quirks)
    : job_(std::move(job)),
      model_(&model),
      truth_(std::move(truth)),
      validation_(&validation),
      cluster_(&cluster),
      restart_cost_(restart_cost),
      quirks_(quirks),
      calibration_(1.0 / model.slowdown),
      gpu_seconds_(cluster.types.size(), 0.0) {
  // This job's observations change only in observe(): the estimator may reuse what it
  // resolved from them until then (job_state.hpp).
  job_.observations_version = 1;
}

int SimJob::gpus() const {
  int g = 0;
  for (int x : placement_) g += x;
  return g;
}

double SimJob::batch_size() const {
  return static_cast<double>(gpus()) * atomic_bsz_ * (accum_steps_ + 1);
}

void SimJob::observe(int nodes, int replicas, int bsz, StepSync t, GradientStats g, Estimator&) {
  job_.gradient = g;
  const std::string& type = cluster_->types[type_].name;
  for (const auto& o : job_.observations) {
    if (o.gpu_type == type && o.nodes == nodes && o.replicas == replicas && o.local_bsz == bsz) {
      return;  // seen before: the fitted model stands
    }
  }
  job_.observations.push_back({type, nodes, replicas, bsz, t.step, t.sync});
  ++job_.observations_version;
}

void SimJob::update_local_bsz(Estimator& estimator) {
  if (type_ < 0 || placement_.empty()) return;
  GroundTruth& truth = *truth_[type_];
  const ModelGpu& gpu = truth.gpu();
  const int replicas = gpus();
  const int nodes = static_cast<int>(placement_.size());
  const int max_b = truth.max_local_bsz(placement_);
  const double b0 = model_->init_batch_size;
  const double app_max = model_->max_batch_size;
  double batch = 0;  // 0: to be optimised
  if (job_.spec.adaptivity != Adaptivity::adaptive) batch = job_.spec.batch_size;
  TypeModel tm;
  if (batch == 0) tm = estimator.type_model(job_, type_);
  if (batch == 0 && (!job_.gradient || !tm.has_model)) {
    batch = std::max(b0, static_cast<double>(gpu.min_local_bsz) * replicas);
  }
  int b = 0, s = 0;
  if (batch == 0) {
    GoodputFunction f(tm.params, job_.gradient, b0);
    BatchLimits l;
    l.max_batch = app_max;
    l.min_local = gpu.min_local_bsz;
    l.max_local = max_b;
    l.tune = true;
    BatchChoice c = f.optimize(nodes, replicas, l);
    b = c.local_bsz;
    s = c.accum_steps;
  } else {
    std::tie(b, s) = split_fixed(batch, replicas, max_b, b0, app_max);
  }
  // Memory: never above what was ever profiled with this many replicas.
  if (int mr = truth.max_local_for_replicas(replicas); mr > 0) b = std::min(b, mr);
  b = std::min(b, static_cast<int>(app_max / (static_cast<double>(replicas) * (s + 1))));
  atomic_bsz_ = std::max(b, 1);
  accum_steps_ = s;
}

void SimJob::step(double seconds, Estimator& estimator) {
  if (completion_) return;
  if (placement_.empty() || type_ < 0) {
    clock_ += seconds;
    return;
  }
  const int g = gpus();
  const double delay = std::min(rescale_left_, seconds);
  clock_ += delay;
  attained_ += delay * g;
  gpu_seconds_[type_] += delay * g;
  rescale_left_ -= delay;
  seconds -= delay;
  GroundTruth& truth = *truth_[type_];
  const double cap = limit_ < 1 ? limit_ * validation_->progress_at(validation_->max_epochs())
                                : std::numeric_limits<double>::infinity();
  while (seconds > 0 && !completion_) {
    if (progress_ >= cap) {  // at its rung: idle, holding the GPUs, to the round's end
      clock_ += seconds;
      attained_ += seconds * g;
      gpu_seconds_[type_] += seconds * g;
      seconds = 0;
      break;
    }
    const int nodes = static_cast<int>(placement_.size());
    const int replicas = g;
    const double local = static_cast<double>(atomic_bsz_) * (accum_steps_ + 1);
    const double batch = replicas * local;
    const double scale = batch / model_->init_batch_size;
    GradientStats gs = validation_->grad_stats(batch, epoch_);
    const double gain = (gs.var + gs.sqr) / (gs.var / scale + gs.sqr);
    StepSync t = truth.step_sync(placement_, atomic_bsz_);
    observe(nodes, replicas, atomic_bsz_, t, gs, estimator);
    const double iter = t.step + (t.step - t.sync) * accum_steps_;
    const double rate = gain / iter * calibration_;
    const double epoch_end = validation_->progress_at(epoch_ + 1);
    const double next = std::min(epoch_end, cap);
    if (progress_ + rate * seconds < next) {
      progress_ += rate * seconds;
      clock_ += seconds;
      attained_ += seconds * g;
      gpu_seconds_[type_] += seconds * g;
      seconds = 0;
    } else if (next < epoch_end) {  // the rung, inside an epoch
      const double delta = std::nearbyint((next - progress_) / rate);
      progress_ = next;
      clock_ += delta;
      attained_ += delta * g;
      gpu_seconds_[type_] += delta * g;
      seconds -= delta;
    } else {
      // Epoch boundary: whole seconds, ties to even (as Python's round).
      const double delta = std::nearbyint((next - progress_) / rate);
      ++epoch_;
      if (epoch_ > validation_->max_epochs() - 1) completion_ = clock_ + delta;
      progress_ = next;
      clock_ += delta;
      attained_ += delta * g;
      gpu_seconds_[type_] += delta * g;
      seconds -= delta;
    }
    if (!completion_) update_local_bsz(estimator);
  }
  clock_ += seconds;
}

void SimJob::apply(int type, const std::vector<int>& placement, bool restart,
                   Estimator& estimator) {
  auto start = [&] {
    placement_ = placement;
    update_local_bsz(estimator);
    rescale_left_ = restart_cost_ > 0 || !quirks_.zero_restart_cost_is_30s ? restart_cost_ : 30;
    restarts_ = restarts_ < 0 ? 0 : restarts_ + 1;
  };
  if (type != type_) {
    type_ = type;
    if (!placement.empty() && type >= 0) {
      if (!truth_[type]) {
        throw Error(ExitStatus::software,
                    name() + ": no ground truth on GPU type " + cluster_->types[type].name);
      }
      start();
    } else {
      type_ = -1;
      placement_.clear();
      atomic_bsz_ = 0;
    }
    return;
  }
  if (placement.empty()) {
    placement_.clear();
    atomic_bsz_ = 0;
    return;
  }
  if (restart) {
    start();
  } else {
    placement_ = placement;
  }
}

void SimJob::show_true_rates(GoodputRow& row) const {
  const double batch = row.fixed_batch;
  if (!(batch > 0)) return;
  for (auto& e : row.fixed) {
    const int t = e.config.type;
    if (t < 0 || t >= static_cast<int>(truth_.size()) || !truth_[t]) continue;
    // Whole nodes first, then the remainder.
    const int gpn = cluster_->types[t].gpus_per_node;
    std::vector<int> placement;
    for (int left = e.config.gpus; left > 0; left -= gpn) placement.push_back(std::min(left, gpn));
    GroundTruth& truth = *truth_[t];
    const auto [b, s] = split_fixed(batch, e.config.gpus, truth.max_local_bsz(placement),
                                    model_->init_batch_size, model_->max_batch_size);
    if (b < 1) continue;
    StepSync st;
    try {
      st = truth.step_sync(placement, b);
    } catch (const Error&) {
      continue;  // outside the measurements: the estimate stands
    }
    const double iteration = st.step + (st.step - st.sync) * s;
    if (iteration > 0) e.throughput = batch * calibration_ / iteration;
  }
}

double SimJob::mean_contention() const {
  double c = 0;
  for (int x : contention_) c += x;
  return contention_.empty() ? 0 : c / contention_.size();
}

double SimJob::fraction() const {
  const double target = validation_->progress_at(validation_->max_epochs());
  return target > 0 ? std::min(1.0, progress_ / target) : 1.0;
}

JobState& SimJob::scheduler_view(double now, const std::optional<Config>& decided) {
  job_.age = now - job_.spec.submit_time;
  job_.restarts = restarts();
  job_.restoring = rescale_left_ > 0;
  job_.attained_service = attained_;
  job_.progress = progress_;
  job_.target_progress = validation_->progress_at(validation_->max_epochs());
  job_.current.reset();
  if (decided) {
    const int gpn = cluster_->types[decided->type].gpus_per_node;
    CurrentAllocation c;
    c.gpu_type = cluster_->types[decided->type].name;
    for (int left = decided->gpus, n = 0; n < decided->nodes; ++n) {
      int here = n + 1 == decided->nodes ? left : std::min(left, gpn);
      c.placement.push_back(here);
      left -= here;
    }
    job_.current = c;
  }
  return job_;
}

}  // namespace sia
