// JobState: a job as the scheduler knows it between rounds -- its spec plus what happened
// to it: age, restarts, the configuration it holds, whether it is inside a
// checkpoint-restore, what its workers reported (iteration times per GPU type and
// placement, the latest gradient statistics) and the throughput models already fitted to
// those reports (a cache, refitted when the reports change).
// In a Jobs document each job is its JobSpec fields plus an optional "state" object;
// a bare JobSpec document is a job with an empty state (just submitted).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/document.hpp"
#include "core/goodput_matrix.hpp"
#include "core/job_spec.hpp"
#include "core/profile.hpp"
#include "core/run_as.hpp"
#include "model/perf_model.hpp"

namespace sia {

struct CurrentAllocation {
  std::string gpu_type;
  std::vector<int> placement;  // GPUs per node
  int nodes() const { return static_cast<int>(placement.size()); }
  int gpus() const;
};

struct FittedModel {
  PerfParams params;
  int points = 0;                 // measurements it was fitted to
  std::uint64_t fingerprint = 0;  // of those measurements: refit when they change
};

// What the estimator resolved about a job on one GPU type (its fitted model, batch limits
// and what it was measured with): exposed for tests and for the simulator's batch choice.
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

// A TypeModel as resolved from one version of a job's observations. It stays valid for
// later versions while the job has as many observations of its GPU type as then (a
// versioned holder only appends; see JobState::observations_version).
struct ResolvedTypeModel {
  std::uint64_t observations_version = 0;
  std::size_t type_observations = 0;  // the job's observations of the type then
  std::uint64_t estimator = 0;        // which Estimator resolved it (Estimator::id)
  std::size_t store_generation = 0;   // the store's points of the job's model on the type
  TypeModel model;
};

// A job's goodput row as estimated from one set of inputs: the version of its observations,
// its gradient statistics, and the profile store's points of its model. While all three
// are the same, so is the row but for what changes every round (age, restarts, attained
// service, current allocation, restore, progress), which the estimator refreshes.
struct EstimatedRow {
  std::uint64_t observations_version = 0;
  std::uint64_t estimator = 0;       // which Estimator estimated it (Estimator::id)
  std::size_t store_generation = 0;  // the store's points of the job's model, all types
  std::optional<GradientStats> gradient;
  GoodputRow row;
};

// FNV-1a over the measurements a model is fitted to.
std::uint64_t fingerprint_points(const std::vector<ProfilePoint>& points);

struct JobState {
  JobSpec spec;
  double age = 0;  // seconds since submission
  int restarts = 0;
  std::optional<CurrentAllocation> current;
  bool restoring = false;
  double attained_service = 0;             // GPU-seconds
  std::vector<ProfilePoint> observations;  // from reports while running
  std::optional<GradientStats> gradient;   // latest reported
  double progress = 0;         // statistical progress so far (iterations at the initial batch)
  std::int64_t step = 0;       // optimizer steps its workers reported (a restore is expected)
  std::string checkpoint_dir;  // where its checkpoints live on every node ("": sia-run's choice)
  // A trial of an app: its workers stop (as preempted) at this fraction of their training,
  // the budget of its app scheduler's phase (0: none; SIA_STOP_FRACTION).
  double stop_fraction = 0;
  // The controller's restarts of the job on an unchanged placement (a multi-node job whose
  // nodes could not reach each other, controller.peer_retries): a change starts the job
  // again on its nodes even where it ended failed (0: none; absent in older documents).
  int attempt = 0;
  double target_progress = 0;  // needed to finish; 0: from the catalog
  // Whom its processes run as on the nodes (core/run_as.hpp); nullopt: whoever runs sia-run.
  std::optional<RunAs> run_as;
  std::map<std::string, FittedModel> models;  // by GPU type
  // Set by a holder that knows when `observations` change (the simulator): every change
  // appends measurements (none is ever changed or removed) and gives a new non-zero value,
  // and the estimator then reuses what it resolved from the same measurements of a GPU type
  // (`resolved`, by the same key as `models`) instead of gathering and hashing them again,
  // and the whole row it estimated from the same version, gradient and store
  // (`estimated`). Such a holder also keeps `spec` as it was. 0 (jobs files, the
  // controller, whose reports update measurements in place): unknown, always resolved afresh. None
  // of the three is serialised.
  std::uint64_t observations_version = 0;
  std::map<std::string, ResolvedTypeModel> resolved;
  std::optional<EstimatedRow> estimated;

  // Where the job was read from, for messages ("jobs.json", "jobs[3]"); not serialised.
  std::string file;
  std::string path;
  // "jobs.json: jobs[3].model" for field "model".
  std::string where(const std::string& field = "") const;
};

JobState parse_job_state(const Node& job);  // JobSpec fields + optional "state"
nlohmann::json job_state_to_json(const JobState& job);
// Reads every job from documents of kind Jobs ({"jobs": [...]}) or JobSpec.
std::vector<JobState> jobs_from_documents(const std::vector<Document>& docs);

}  // namespace sia
