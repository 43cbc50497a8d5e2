// The estimator behind sia-estimate: turns jobs (spec + reports) into a GoodputMatrix.
// For every job and every GPU type it fits the job's throughput model to what was measured
// on that type (the bootstrap profile and the workers' reports), picks the best batch for
// each valid configuration, and normalises the row (Sia §3.2-3.3):
//  - scale-up rule: a job may use at most `scale_up` x the largest replica count it has
//    been observed running with, on any type (1 GPU before it ever ran);
//  - a type the job has run multi-GPU on uses its own model; a type with only
//    single-GPU measurements borrows the scaling shape of the type with the most
//    observations, scaled by the ratio of their single-GPU throughputs (Sia Eq. 1);
//  - a type with nothing known offers one GPU at the row's base value.
// The "reference" profile reproduces the published artifact instead: models only from
// running, projection from the first type that has one with the catalog's offline
// throughput ratio, per-type replica caps of 64, the workload's batch as the scheduler's
// batch cap, and its restart penalties.
// Thread-safety: an Estimator is not thread-safe (it caches fits); use one per thread.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/configuration.hpp"
#include "core/goodput_matrix.hpp"
#include "model/catalog.hpp"
#include "model/goodput.hpp"
#include "model/job_state.hpp"

namespace sia {

struct EstimatorOptions {
  bool reference = false;       // the published artifact's behaviour
  bool share_max_replicas = true;
  bool project = true;          // estimate unvisited types from visited ones
  bool seed_profiles = true;    // use the catalog's single-GPU rows as bootstrap profile
  int scale_up = 2;
  ConfigLimits limits;          // per-configuration caps (reference: 64 GPUs)
  bool cap_profiled_nodes = false;  // no more nodes than the catalog ever measured
  bool baseline_info = true;  // fill the rows' fixed configurations and type-blind models
};

// What the estimator resolved about one job on one GPU type (exposed for tests and for the
// simulator's batch-size choice).
struct TypeModel {
  bool usable = false;     // the type is allowed and its batch limits are known
  bool has_model = false;  // a model could be fitted to measurements on this type
  bool multi_gpu = false;  // some measurement used more than one GPU
  int points = 0;
  PerfParams params;
  int min_local = 1;
  int max_local = 1;
  int stages = 1;
  double single_gpu_throughput = 0;  // for projection ratios
};

class Estimator {
 public:
  Estimator(const Cluster& cluster, const Catalog& catalog, EstimatorOptions options = {});

  const Cluster& cluster() const { return cluster_; }
  const EstimatorOptions& options() const { return options_; }

  // Estimates every job; refreshes each job's fitted-model cache (state.models).
  GoodputMatrix estimate(std::vector<JobState>& jobs);
  GoodputRow estimate_job(JobState& job);

  // Resolved per-type models of a job (fits if needed, caching the fit in the job).
  std::vector<TypeModel> type_models(JobState& job);
  // `with_seed` forces the catalog's single-GPU rows into the fit even in the reference
  // profile (the baselines' throughput estimates for fixed configurations need them).
  TypeModel type_model(JobState& job, std::size_t type, bool with_seed = false);

  // Initial and maximum global batch of a job (spec, else catalog).
  double init_batch_size(const JobState& job) const;
  double max_batch_size(const JobState& job) const;
  double restart_penalty(const JobState& job) const;

 private:
  const ModelInfo* model_of(const JobState& job) const;
  void fill_baseline_info(JobState& job, GoodputRow& row, const std::vector<TypeModel>& tms,
                          const std::vector<int>& max_rep, double b0, double bmax,
                          const std::optional<GradientStats>& gradient);

  Cluster cluster_;
  const Catalog& catalog_;
  EstimatorOptions options_;
  std::vector<std::vector<Config>> configs_;  // per type
};

// The options of the published artifact (--compat reference).
EstimatorOptions reference_estimator_options();

}  // namespace sia
