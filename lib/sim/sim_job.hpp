// A job inside the simulator: its true progress through training, driven by the ground
// truth (measured step times, gradient statistics per epoch), and what it shows the
// scheduler (its own observations and fitted models, in a JobState). Follows the published
// simulator's job (the Sia paper's evaluation, Subramanya et al., SOSP '23): per-second progress at
// the statistical gain over the true iteration time, epoch boundaries at integer seconds,
// checkpoint-restore delays charged on every start, shape change and migration, the batch
// re-optimised with the job's own fitted model after every stretch of training (each epoch
// boundary and each round).
// Thread-safety: not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/compat.hpp"
#include "core/goodput_matrix.hpp"
#include "model/estimator.hpp"
#include "model/job_state.hpp"
#include "sim/ground_truth.hpp"

namespace sia {

// How the simulated jobs of the Sia paper's artifact (Subramanya et al., SOSP '23) differ
// from this project's, one named flag per difference; sim_job_quirks() sets them from the
// profile, all on for Compat::reference, none for the default.
struct SimJobQuirks {
  // A restart whose cost is 0 still takes 30 s: the artifact's simulated job falls back to
  // its default rescale time when a model states none. The default profile charges the
  // cost the workload or model states, zero included.
  bool zero_restart_cost_is_30s = false;
};

// The quirks of a profile: none for Compat::standard, all for Compat::reference.
SimJobQuirks sim_job_quirks(Compat compat);

class SimJob {
 public:
  // `truth[t]` is the ground truth on cluster GPU type t (null if the model has none).
  SimJob(JobState job, const ModelInfo& model, std::vector<GroundTruth*> truth,
         const ValidationTruth& validation, const Cluster& cluster, double restart_cost,
         SimJobQuirks quirks);

  const std::string& name() const { return job_.spec.name; }
  double submission_time() const { return job_.spec.submit_time; }
  bool completed() const { return completion_.has_value(); }
  std::optional<double> completion_time() const { return completion_; }

  // Advances the job by `seconds` of simulated time (the round length).
  void step(double seconds, Estimator& estimator);
  // Applies a new allocation: GPU type (-1: none) and GPUs per node. `restart` says
  // whether the workers must restart (a new start, another shape or type, moved GPUs).
  void apply(int type, const std::vector<int>& placement, bool restart, Estimator& estimator);

  // The true throughput of the job's tuned configuration on every type of `row.fixed`:
  // each entry's throughput becomes the global batch x the true iterations/s of the
  // configuration packed whole nodes first, from the measured tables and the calibration
  // (entries outside the measurements keep the estimate). The published simulator's
  // Gavel reads its throughputs so (Subramanya et al., SOSP '23, artifact).
  void show_true_rates(GoodputRow& row) const;
  // Ends the job early at simulated time `at` (its app scheduler stopped it; call apply()
  // with no GPUs first). It then counts as completed.
  void stop(double at) {
    completion_ = at;
    stopped_ = true;
  }
  bool stopped() const { return stopped_; }
  // Trains no further than `fraction` of its budget (an app scheduler's rung; 1: no
  // limit): at the limit it idles, holding its GPUs, until the round ends.
  void set_limit(double fraction) { limit_ = fraction; }
  // How far training has come: progress over the progress at the last epoch, 0..1.
  double fraction() const;

  // What the scheduler sees this round (age, restarts, observations, fitted models...).
  JobState& scheduler_view(double now, const std::optional<Config>& decided);

  // Accounting.
  int type() const { return type_; }
  const std::vector<int>& placement() const { return placement_; }
  int gpus() const;
  int restarts() const { return restarts_ < 0 ? 0 : restarts_; }
  bool started() const { return restarts_ >= 0; }
  double restore_left() const { return rescale_left_; }
  double progress() const { return progress_; }
  int epoch() const { return epoch_; }
  int local_bsz() const { return atomic_bsz_; }
  int accum_steps() const { return accum_steps_; }
  double batch_size() const;
  const std::vector<double>& gpu_seconds_by_type() const { return gpu_seconds_; }
  double queued_seconds() const { return queued_; }
  std::vector<int>& contention() { return contention_; }
  const std::vector<int>& contention() const { return contention_; }
  // The mean of contention() (0 before any round): the N_avg of its fair share.
  double mean_contention() const;
  const JobState& state() const { return job_; }

 private:
  void update_local_bsz(Estimator& estimator);
  void observe(int nodes, int replicas, int bsz, StepSync t, GradientStats g, Estimator& est);

  JobState job_;
  const ModelInfo* model_;
  std::vector<GroundTruth*> truth_;
  const ValidationTruth* validation_;
  const Cluster* cluster_;
  double restart_cost_;
  SimJobQuirks quirks_;
  double calibration_;

  int type_ = -1;
  std::vector<int> placement_;
  int atomic_bsz_ = 0;
  int accum_steps_ = 0;
  double progress_ = 0;
  int epoch_ = 0;
  double rescale_left_ = 0;
  int restarts_ = -1;  // -1: never started
  double clock_ = 0;
  double attained_ = 0;
  std::optional<double> completion_;
  bool stopped_ = false;
  double limit_ = 1;
  std::vector<double> gpu_seconds_;
  double queued_ = 0;
  std::vector<int> contention_;
};

}  // namespace sia
