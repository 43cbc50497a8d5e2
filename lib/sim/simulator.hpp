// The trace-driven simulator behind `sia-ctl simulate`: every round (default 60 s) it
// advances every job through the measured ground truth, then runs the controller's round
// (lib/round: the app schedulers' phase step, contention, the scheduling pass estimate ->
// solve (any policy) -> place) on what the jobs have reported, exactly as a deployment
// would, and applies the new placement to the jobs (SimJob::apply: restarts and restore
// delays included). The policy never sees the tables: only the jobs' observations and
// fitted models. "reference" reproduces the published artifact's behaviour for
// comparison: its estimator, policy and placer quirks, and the simulator's own, named in
// sim/sim_quirks.hpp (its restart rule, its metric pooling).
// Deterministic: the same inputs give the same results (wall-clock timings aside).
// Thread-safety: simulate() is re-entrant (its state is local).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/app_spec.hpp"
#include "core/cluster.hpp"
#include "core/compat.hpp"
#include "core/job_spec.hpp"
#include "model/catalog.hpp"
#include "model/estimator.hpp"
#include "policy/policy.hpp"
#include "round/reservations.hpp"
#include "sim/ground_truth.hpp"
#include "sim/sim_quirks.hpp"

namespace sia {

struct SimOptions {
  double round = 0;  // seconds; 0: the policy's own (default_round)
  std::string policy = "sia";
  PolicyOptions policy_options;
  Compat compat = Compat::standard;            // --compat: the quirks it turns on
  bool fairness = true;                        // finish-time fairness (isolated runs per job)
  Profiling profiling = Profiling::bootstrap;  // what the scheduler knows before a job runs
  // Sia+: the profile store (model/estimator.hpp; always off with `reference`:
  // SimQuirks::no_profile_store).
  ProfileStore profile_store = kDefaultProfileStore;
  double max_time = 60 * 86400.0;  // give up (error) past this simulated time
  // Stop after this much simulated time (0: when every job is done). Jobs unfinished by
  // then are left out of the results and no fairness runs are made (a policy-runtime
  // study needs only the rounds).
  double horizon = 0;
  std::string save_rounds_dir;  // write every round's stage inputs and outputs here
  bool record_rounds = false;   // keep per-round snapshots in the result
  std::function<void(double now, int done, int total)> progress;  // once per round
  // Ground truth to share between runs (isolated fair-share runs reuse the workload's);
  // made on demand when null.
  std::shared_ptr<TruthStore> truths;
  // The app schedulers of the workload's apps (core/app_spec.hpp); a job naming an app not
  // listed here is a trial of an app without one (every trial runs to the end).
  std::vector<AppSpec> apps;
  // --reservations (round/reservations.hpp): set, the reserved nodes are kept out of each
  // round (sim/sim_reservations.hpp) and the results count what was lent and taken back.
  // The isolated fair-share runs behind finish-time fairness run without them.
  std::optional<std::vector<Reservation>> reservations;
};

struct JobResult {
  std::string name;
  std::string model;
  std::string app;       // empty: an app of one
  bool stopped = false;  // its app scheduler stopped it (completion: when)
  std::string stop_reason;
  double submission = 0;
  double completion = 0;
  double jct = 0;
  int restarts = 0;
  double queued = 0;                // seconds active without GPUs
  std::vector<double> gpu_seconds;  // per cluster GPU type (held, incl. restore)
  double contention = 0;  // mean active apps (a job without an app is one) over its rounds
  std::optional<double> isolated_jct;  // alone on its fair share
  std::optional<double> rho;           // finish-time fairness
  // Deadlines (sim/deadlines.hpp; set when the workload has them).
  std::optional<JobClass> job_class;  // as the workload asked
  std::optional<double> deadline;     // seconds from the trace's start
  bool admitted = false;              // a guaranteed job admitted (else it ran best-effort)
  bool deadline_met = false;          // finished (not stopped) by its deadline
  // Admitted: the configuration its admission reserved and when it planned to finish.
  std::string plan_type;
  int plan_gpus = 0;
  double plan_finish = 0;
};

// An app (Themis' unit of fairness, Mahajan et al., NSDI '20): a search's trials, or a job
// without an app alone. It finishes when its last trial does.
struct AppResult {
  std::string name;
  int trials = 1, stopped = 0;
  double submission = 0, completion = 0;
  double act = 0;                      // app completion time: completion - submission
  double contention = 0;               // N_avg: mean active apps over its rounds
  std::optional<double> best_metric;   // a search's best trial's metric at its end
  std::optional<double> isolated_act;  // alone on its fair share
  std::optional<double> rho;           // finish-time fairness of the app
};

struct RoundJob {
  std::string name;
  int type = -1;
  std::vector<int> placement;
  double batch_size = 0;
  int accum_steps = 0;
  int epoch = 0;
  double progress = 0;
  int restarts = 0;
  std::optional<double> completion;
};

struct RoundRecord {
  double t = 0;
  int active = 0;
  int running = 0;
  std::vector<int> gpus;      // GPUs held at the round's end, per cluster GPU type
  double policy_runtime = 0;  // seconds (wall clock) the policy took; 0 without active jobs
  // Reservations (SimOptions::reservations): GPUs lent to training this round, nodes taken
  // back from running jobs and the GPUs those jobs held on them.
  int lent_gpus = 0, take_backs = 0, taken_back_gpus = 0;
  std::vector<RoundJob> jobs;  // filled when record_rounds
};

struct SimSummary {
  int jobs = 0;
  double avg_jct = 0, median_jct = 0, p99_jct = 0;
  double makespan = 0;
  double gpu_hours_per_job = 0;
  double restarts_per_job = 0;
  double contention_mean = 0, contention_max = 0;
  double queue_mean = 0, queue_max = 0;
  double unfair_fraction = 0, worst_rho = 0;
  int rho_jobs = 0;  // jobs with a finish-time fairness figure
  double policy_runtime_median = 0, policy_runtime_p95 = 0;  // seconds (wall clock)
  double round_runtime_median = 0, round_runtime_p95 = 0;    // estimate + policy, seconds
  int rounds = 0;
  // Per app (filled when the workload has apps; a job without an app is an app of one).
  int apps = 0, app_rho_count = 0;
  double avg_act = 0, unfair_app_fraction = 0, worst_app_rho = 0;
  // Deadlines (sim/deadlines.hpp; `deadlines` when the workload has them): admitted
  // guaranteed jobs that met their deadlines, the guaranteed jobs admitted, the jobs that
  // ran best-effort (refused guaranteed ones too): those with a deadline that met it, their
  // JCT and finish-time fairness; every job's GPU hours.
  bool deadlines = false;
  int guaranteed = 0, admitted = 0, best_effort_jobs = 0, best_effort_with_deadline = 0;
  double admitted_fraction = 0, guaranteed_met_fraction = 0, best_effort_met_fraction = 0;
  double best_effort_avg_jct = 0, best_effort_mean_rho = 0, best_effort_worst_rho = 0;
  double gpu_hours = 0;
  // Reservations (`reservations` when the simulation had them): GPU hours lent to training,
  // take-backs (a node taken back while jobs ran on it) and the GPUs in use on those nodes.
  bool reservations = false;
  double lent_gpu_hours = 0;
  int take_backs = 0, taken_back_gpus = 0;
};

struct SimResult {
  std::string cluster;
  std::string workload;
  std::string policy;
  std::string profile;  // default | reference
  double round = 60;
  bool reservations = false;  // SimOptions::reservations was set
  std::vector<std::string> gpu_types;
  std::vector<JobResult> jobs;  // workload order
  std::vector<AppResult> apps;  // when the workload has apps: in order of first trial
  std::vector<RoundRecord> rounds;
  std::vector<double> policy_runtimes;  // seconds per round (wall clock)
  std::vector<double> round_runtimes;   // the estimate and the policy together, per round
  SimSummary summary;
};

SimResult simulate(const Cluster& cluster, const Catalog& catalog,
                   const std::vector<JobSpec>& workload, const SimOptions& options);

// Fills the summary from jobs and rounds (nearest-rank percentiles; SimQuirks::p99_by_index
// for the artifact's p99).
SimSummary summarize(const SimResult& r, const SimQuirks& quirks);

}  // namespace sia
