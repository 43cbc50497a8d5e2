// JobSpec: what a user submits -- a job name, the model it trains (a catalog key) or its
// own profile, how it may be scaled, and its constraints. Written as TOML by people
// (job.toml) or as a JobSpec document by scripts; workload CSV rows convert to it.
// Adaptivity (Sia §3.5): adaptive jobs let the scheduler choose GPU type, count and batch
// size; strong-scaling jobs fix the global batch but let the GPU count vary up to `gpus`;
// rigid jobs fix both the batch and the GPU count and only the type is chosen.
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/names.hpp"
#include "core/node.hpp"
#include "core/profile.hpp"

namespace sia {

// Ranges every reader enforces, so that no count, batch or duration overflows downstream
// (local batches are ints; durations become std::chrono values).
inline constexpr int kMaxJobGpus = 1000000;
inline constexpr double kMaxBatchSize = 1e9;  // samples in one global batch
inline constexpr double kMaxSeconds = 1e9;    // about 31 years
inline constexpr int kMaxPriority = 1000000;

enum class Adaptivity { adaptive, strong_scaling, rigid };

const char* to_string(Adaptivity a);

// A job's service class (deadlines, sia-ctl(1)): a guaranteed job is admitted only if it
// can finish by its deadline, and the round then keeps it on schedule; a best-effort job
// (every job without a class) shares what is left, its deadline a wish the policy weighs.
enum class JobClass { best_effort, guaranteed };

const char* to_string(JobClass c);

struct JobSpec {
  std::string name;
  std::string model;  // catalog key; may be empty when `profile` is given
  Adaptivity adaptivity = Adaptivity::adaptive;
  int min_gpus = 1;
  int max_gpus = 0;            // 0: no limit of the job's own
  int gpus = 0;                // rigid: exact count; strong-scaling: upper bound; 0: unset
  double init_batch_size = 0;  // B0; 0: from the catalog
  double max_batch_size = 0;   // 0: from the catalog
  double batch_size = 0;       // fixed global batch (rigid, strong-scaling); 0: unset
  int pipeline_stages = 0;     // 0: from the catalog (1 for data-parallel models)
  double restart_cost = -1;    // seconds to checkpoint and restore; < 0: from the catalog
  std::vector<std::string> allowed_gpu_types;  // empty: any
  int priority = 0;
  bool preemptible = true;
  double submit_time = 0;            // seconds from the start of a workload (simulation)
  std::vector<std::string> command;  // what sia-run starts (may be empty in simulation)
  // The directory the command runs in on every node, absolute: where it was submitted
  // from (sia-ctl submit records its own working directory when the spec gives none).
  // Empty: sia-run's own working directory (a job file handed to sia-run by hand).
  std::string workdir;
  std::optional<Profile> profile;  // the job's own measurements
  // A trial of an app (a hyper-parameter search, see core/app_spec.hpp): the app's name
  // (empty: the job is an app of one), its hyper-parameter values, and in simulation the
  // metric it converges to (what successive halving ranks; see sim/searches.hpp).
  std::string app;
  std::map<std::string, double> hparams;
  std::optional<double> quality;
  // Deadlines: the class, and when the job should have finished, on the clock of
  // submit_time (simulation: seconds from the workload's start; the controller: Unix
  // seconds). Unset: no deadline (a guaranteed job must have one). A deadline written as
  // a duration from submission ("36h") is held in deadline_after until resolve_deadline()
  // knows when the job was submitted.
  JobClass job_class = JobClass::best_effort;
  std::optional<double> deadline;
  std::optional<double> deadline_after;

  bool allows_type(const std::string& type) const;
};

// Validates a JobSpec (the data part of a JobSpec document, or a job.toml).
// `deadline`: a number (seconds on the clock of submit_time), a UTC time
// ("2026-12-05T18:00:00Z", see core/time_text.hpp) or a duration from submission ("36h");
// `class`: "guaranteed" or "best_effort" (the default); a guaranteed job needs a deadline.
JobSpec parse_job_spec(const Node& data);

// Reads a `deadline` as the field or flag `what` carries it, into spec.deadline (a time)
// or spec.deadline_after (a duration); Error(65) "what: expected ..." otherwise.
void set_deadline_text(JobSpec& spec, const std::string& text, const std::string& what);
// Reads a `class` ("guaranteed", "best_effort"); Error(65) naming `what` otherwise.
JobClass parse_job_class(const std::string& text, const std::string& what);

// Fixes the deadline of a job submitted at `submitted` (same clock): a duration becomes a
// time (fix_deadline: only that, for a submission already accepted). resolve_deadline:
// also Error(65) "where: deadline: ... is before submission ..." for a deadline at or
// before `submitted`; "where: class: a guaranteed job needs a deadline" without one.
void fix_deadline(JobSpec& spec, double submitted);
void resolve_deadline(JobSpec& spec, double submitted, const std::string& where);
nlohmann::json job_spec_to_json(const JobSpec& spec);

}  // namespace sia
