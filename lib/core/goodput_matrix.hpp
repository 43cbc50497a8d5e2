// GoodputMatrix: what sia-estimate hands to sia-solve -- for every active job and every
// configuration it may run in, the goodput the job would reach, normalised per row so
// that the row's smallest goodput is worth its base unit -- 1 GPU, a pipeline's stages, or
// a rigid job's GPU count (the Sia policy's scale) -- with the raw figures, the batch the job would
// use and where the number came from ("model": the job's own fitted model on that type;
// "bootstrap": projected from another type (Sia Eq. 1); "default": nothing known yet, a single GPU
// is offered). The row also carries what the policy needs of the job's history (age, restarts,
// restart penalty, current configuration, whether it is inside a checkpoint-restore).
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch_setting.hpp"
#include "core/cluster.hpp"
#include "core/configuration.hpp"
#include "core/job_model_info.hpp"
#include "core/job_spec.hpp"

namespace sia {

enum class GoodputSource { model, bootstrap, fallback };
const char* to_string(GoodputSource s);

struct GoodputEntry {
  Config config;
  double goodput = 0;      // normalised
  double raw_goodput = 0;  // samples/s at the initial batch size's efficiency
  double throughput = 0;   // samples/s
  BatchSetting batch;      // batch_size, local_bsz, accum_steps on the wire
  GoodputSource source = GoodputSource::model;
};

// The app a job is a trial of (core/app_spec.hpp), and where its successive halving is:
// what a policy that treats the app as one unit needs (Themis, NSDI '20, §4.3.2).
struct AppRef {
  std::string name;
  int trials = 1;  // n_0: the trials it started with
  int eta = 2;
  int rungs = 1;  // phases (1: every trial trains to the end)
  int phase = 0;  // the current phase, from 0
  // Hyperband: the trial's bracket of `brackets`; trials, rungs and phase are the bracket's.
  int bracket = 0;
  int brackets = 1;
};

struct GoodputRow {
  std::string job;
  Adaptivity adaptivity = Adaptivity::adaptive;
  int priority = 0;
  double age = 0;  // seconds since submission
  int restarts = 0;
  double restart_penalty = 30;  // seconds (S_j of the restart factor)
  double attained_service = 0;  // GPU-seconds so far
  bool preemptible = true;
  bool restoring = false;  // inside a checkpoint-restore: keep its configuration
  std::optional<Config> current;
  int min_gpus = 1;
  int max_gpus = 1;                   // after the scale-up rule
  double normalizer = 1;              // goodput = raw_goodput * normalizer
  std::vector<GoodputEntry> entries;  // type order, then GPUs ascending

  // For the baselines. The job's tuned fixed configuration (the "TunedJobs" GPU count and
  // batch of the paper's baselines), evaluated on every GPU type that can hold it
  // (goodput normalised like the entries; throughput in samples/s), when the job has one.
  int fixed_gpus = 0;
  double fixed_batch = 0;
  std::vector<GoodputEntry> fixed;
  JobModelInfo model;                   // fitted models, gradient, batch limits
  std::optional<JobProgress> progress;  // how far the job is, when known
  std::optional<AppRef> app;            // absent: an app of one
  // Deadlines (issue 34; set by the simulator, not yet on the wire): the job's class and
  // the seconds from now to its deadline (absent: none).
  JobClass job_class = JobClass::best_effort;
  std::optional<double> deadline_in;
};

struct GoodputMatrix {
  Cluster cluster;
  std::string profile = "default";  // the estimator's behaviour profile
  std::vector<GoodputRow> jobs;     // sorted by name
  std::vector<std::string> order;   // the jobs in the order they were given (submission)
};

// The whole GoodputMatrix document, the one writer of the format (sia-formats(5)): a
// streaming writer with the same layout and number formatting as dump_document, keys in
// sorted order.
std::string goodput_matrix_document(const GoodputMatrix& m, const nlohmann::json& metadata,
                                    bool pretty);
GoodputMatrix parse_goodput_matrix(const Node& data);
// A row's "app" object.
AppRef parse_app_ref(const Node& app);
// Shared by the Allocation and Placement readers: {"gpu_type", "nodes", "gpus"}.
Config parse_config_ref(const Node& n, const Cluster& cluster);
nlohmann::json config_ref_to_json(const Config& c, const Cluster& cluster);

}  // namespace sia
