// The simulator's ground truth for one model on one GPU type, from the catalog's measured
// tables (the semantics of the Sia paper's simulator, Subramanya et al., SOSP '23):
//  - step and sync time of a placement (GPUs per node, any order) at a per-GPU batch: if
//    the placement was profiled, linear in the batch between its measured rows; otherwise
//    linear interpolation over the Delaunay tetrahedralisation of all measurements in
//    (nodes, replicas, local batch) -- placements averaged per point, scalability rows
//    added. A query outside the measured range is an error, never a silent guess.
//  - the per-placement memory cap (largest profiled local batch);
//  - statistical progress per epoch and gradient statistics per epoch, linear in the
//    global batch between the validated batch sizes.
// Thread-safety: step_sync() memoises under a lock; everything else is immutable, so one
// GroundTruth may serve several simulations at once (TruthStore shares them).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "model/catalog.hpp"
#include "sim/delaunay.hpp"

namespace sia {

struct StepSync {
  double step = 0;
  double sync = 0;
};

class GroundTruth {
 public:
  GroundTruth(const ModelInfo& model, const ModelGpu& gpu);

  const ModelInfo& model() const { return *model_; }
  const ModelGpu& gpu() const { return *gpu_; }

  // Throws Error(software) naming the model, type, placement and batch when out of range.
  StepSync step_sync(const std::vector<int>& placement, int local_bsz);
  int max_local_bsz(const std::vector<int>& placement) const;
  // Largest profiled local batch among rows with exactly `replicas` GPUs, or 0 if none.
  int max_local_for_replicas(int replicas) const;

 private:
  struct Row {
    int bsz;
    double step, sync;
  };
  const ModelInfo* model_;
  const ModelGpu* gpu_;
  std::map<std::string, std::vector<Row>> by_placement_;
  std::map<int, int> max_local_by_replicas_;
  const LinearInterpolator3* interpolator();  // built on first use; null: none possible

  std::mutex memo_mu_;  // guards the memo and the interpolator
  bool interp_built_ = false;
  std::unique_ptr<LinearInterpolator3> interp_;
  std::map<std::pair<std::string, int>, StepSync> memo_;
};

// Gradient statistics and progress of a model, from its validation tables.
class ValidationTruth {
 public:
  explicit ValidationTruth(const ModelInfo& model);
  // Linear in the batch between the validated sizes that bracket it; throws outside
  // [smallest, largest] validated batch or past the last epoch.
  GradientStats grad_stats(double batch_size, int epoch) const;
  double progress_at(int epochs) const;  // progress needed to finish `epochs` epochs
  int max_epochs() const { return model_->max_epochs; }

 private:
  const ModelInfo* model_;
  std::vector<double> progress_;
};

// Ground truth built once per (model, GPU type) and shared by every simulation that needs
// it (a workload's run and its isolated fair-share runs). Thread-safe.
class TruthStore {
 public:
  // Null when the catalog has no measurements of `model` on `gpu_type`.
  GroundTruth* truth(const ModelInfo& model, const std::string& gpu_type);
  const ValidationTruth& validation(const ModelInfo& model);

 private:
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<GroundTruth>> truths_;
  std::map<std::string, std::unique_ptr<ValidationTruth>> validation_;
};

}  // namespace sia
