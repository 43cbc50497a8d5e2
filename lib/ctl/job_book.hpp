// JobBook: everything the controller knows, rebuilt from the snapshot plus the journal.
// It changes only through apply(record), the same call that replays the journal after a
// restart, so the state after a crash is exactly the state that was acknowledged.
// Per job: its JobSpec (with its command), who submitted it and when, its lifecycle
//   queued -> running <-> queued -> finished | failed | cancelled | stopped
// (an ended job never runs again, and its name is never reused; stopped: the trial of an
// app its app scheduler stopped), what its workers reported
// (observations per configuration, gradient statistics, progress), the throughput models
// fitted so far, its placement and starts, and its history of configurations.
// Per app (a hyper-parameter search submitted as one, core/app_spec.hpp): its AppSpec
// (without its template), who submitted it and when, its trials and the phase of its app
// scheduler (per bracket, for hyperband); per trial, the fraction of its training it
// reported and the metric it reported when it first reached the current phase's budget
// (what successive halving ranks).
// Per node: whether it answered, when, and how the last delivery went.
// Reports are deduplicated by (node, job, byte offset): a report line that starts before
// the next offset already taken from that node's file for that job is a duplicate.
// Journal record types (built by the make_* functions; apply() ignores unknown types):
//   submit    {inbox, identity, time, jobs: [JobSpec data...], apps?: [App data...],
//             run_as?: {user, submitter, admin}}
//             (an app's trials are among the jobs, each naming it in `app`; run_as, from
//             the client's identity (core/run_as.hpp), is whom the jobs run as on the nodes:
//             absent (local submissions, journals from before it), the nodes' own user)
//   app-phase {app, phase, time, bracket?}: its app scheduler closed a phase of bracket
//             `bracket` (absent: 0; hyperband has several), the trials it stopped have
//             job-ended records with state stopped just before
//   rejected  {inbox, identity, time, jobs: [names], reason}
//   cancel    {inbox, identity, time, jobs: [names]}  (hold, release, requeue: the same)
//             hold: an active job is not scheduled until released (a running one is
//             stopped with a checkpoint by the next round); release: it may run again;
//             requeue: a running job is left out of the next round (its nodes stop it
//             with a checkpoint) and waits in the queue like any other from then on
//   report    {node, job, offset, next, report}
//   node-seen {node, up, error, time}
//   job-ended {job, state: finished|failed|stopped, reason, exit_status, time, log_tail?}
//             log_tail, for a failed job whose node said which rank failed: {node, rank,
//             text}, the last lines of that rank's log (sia-run status: at most 20 lines,
//             4 KiB); absent or null when there is none
//   job-silent {job, time, silent_for}: its workers stopped reporting; it is restarted
//   job-peer-lost {job, time, node, generation, attempt}: the ranks of a job on several
//             nodes lost their peers (exit 69) on every node while all were up (reported
//             by `node`, of generation `generation`); it starts again from its checkpoint
//             as attempt `attempt` (the Jobs document's state.attempt)
//   round     {round, time, cluster, allocation, placement, models: {job: {type: model}},
//             fairness?: {units, jobs: {job: {t_sh?, t_id?, measured?}},
//             apps: {app: {t_sh?, t_id?, measured?}}}}
//             fairness (absent in journals from before it): the units (apps; a job
//             without an app is one) the round scheduled, and each scheduled job's and
//             app's estimate (policy/fairness_estimate.hpp; {} without one; measured: true
//             when it rests on the measured throughput)
//   delivered {round, node, ok, error, actions: [{job, action, generation, warning?}]}
// A report of the current generation sets the job's step and progress to what it says
// (its real position, also when it is lower: a start that found no checkpoint); the
// steps lost that way and the node's warning (e.g. no checkpoint) stay in `notice`. One
// that came before the delivered record that made its generation current counts once that
// record is applied. A failed job's reports still move its step forward (the step it
// reached); other ended jobs' are ignored.
// Thread-safety: plain value; one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "core/batch_setting.hpp"
#include "core/goodput_matrix.hpp"
#include "core/job_spec.hpp"
#include "core/placement.hpp"
#include "core/profile.hpp"
#include "core/run_as.hpp"
#include "model/job_state.hpp"
#include "policy/fairness_estimate.hpp"
#include "round/contention.hpp"

namespace sia::ctl {

enum class Lifecycle { queued, running, finished, failed, cancelled, stopped };
const char* to_string(Lifecycle s);
std::optional<Lifecycle> parse_lifecycle(const std::string& s);
bool is_ended(Lifecycle s);

// What a client may ask of named jobs (sia-ctl cancel, hold, release, requeue).
enum class JobRequest { cancel, hold, release, requeue };
const char* to_string(JobRequest r);   // "cancel", ...
const char* past_tense(JobRequest r);  // "cancelled", "held", "released", "requeued"
std::optional<JobRequest> parse_job_request(const std::string& s);

// Reports of one configuration, averaged.
struct Observation {
  ProfilePoint point;  // step_time and sync_time: means over `count` reports
  int count = 0;
};

// Where a job runs: its part of the last placement.
struct Placed {
  std::string gpu_type;
  std::vector<NodeGpus> nodes;  // rank order
  BatchSetting batch;
  int gpus() const;
  bool operator==(const Placed& o) const;
};

// The end of a failed job's failing rank's log, as its node reported it.
struct LogTail {
  std::string node;
  int rank = 0;
  std::string text;
};
nlohmann::json log_tail_to_json(const LogTail& t);
// nullopt for null or anything that is not {node, rank, text}.
std::optional<LogTail> log_tail_from_json(const nlohmann::json& j);

struct HistoryEntry {
  std::int64_t round = 0;
  double time = 0;
  std::optional<Placed> placed;  // none: waiting
};

// Finish-time fairness of a job or an app (policy/fairness_estimate.hpp): over the rounds
// that scheduled it, their sum of contending units (N_avg = contention_sum / rounds), and
// the last estimate it got (t_id 0: none yet).
struct FairnessBook : Contention {
  double t_sh = 0, t_id = 0;
  bool measured = false;  // the estimate rests on the job's measured throughput
};

struct BookJob {
  JobSpec spec;
  std::string identity;         // who submitted it ("local:alice", "client:alice")
  std::optional<RunAs> run_as;  // whom it runs as on its nodes; nullopt: their own user
  double submit_time = 0;       // seconds since the epoch
  std::int64_t order = 0;       // submission order
  Lifecycle state = Lifecycle::queued;
  std::string reason;      // why it ended
  std::string held_by;     // who holds it ("" not held): it is not scheduled
  double held_time = 0;    // since when
  std::string requeue_by;  // who asked the next round to requeue it ("" none)
  double end_time = 0;
  std::optional<int> exit_status;
  std::optional<LogTail> log_tail;  // a failed job: the end of its failing rank's log

  std::optional<Placed> placed;
  std::string report_node;      // the node of rank 0, whose reports file the job writes
  int generation = 0;           // sia-run's generation of the job on report_node
  int starts = 0;               // starts and restarts sia-run made
  bool restoring = false;       // (re)started, no report of the new generation yet
  bool done_reported = false;   // the current generation reported "done"
  double attained_service = 0;  // GPU-seconds
  std::vector<Observation> observations;
  std::optional<GradientStats> gradient;
  double progress = 0;
  std::int64_t step = 0;
  std::int64_t lost_steps = 0;  // work lost to starts that found no checkpoint
  std::string notice;           // what an operator should know (the last such start)
  std::int64_t reports = 0;
  double started_time = 0;      // when its current generation was started (a round's time)
  double last_report_time = 0;  // when the controller took in its current workers' last report
  int silent_restarts = 0;      // restarts for silence since its workers last reported
  int peer_restarts = 0;        // restarts for ranks that lost their peers (its attempt)
  std::int64_t peer_lost_generation = 0;  // the generation the last of them was for
  // Of those, the ones since the job last made progress: what controller.peer_retries
  // bounds. Back to 0 once a generation started after the last of them reports a step
  // past `peer_lost_step`, the step the job had reached when that one was counted.
  int peer_retries_used = 0;
  std::int64_t peer_lost_step = 0;
  nlohmann::json last_report;    // the latest report object (null before the first)
  std::string last_report_node;  // the node it came from
  double last_report_at = 0;     // when the controller took it in
  nlohmann::json models = nlohmann::json::object();  // fitted models as in a Jobs document
  std::vector<HistoryEntry> history;
  // The fraction of its training done, as its workers last reported it (report field
  // "fraction"; 0 before one), and, for a trial of an app, its app's metric when it first reached
  // the budget of its app's current phase (none before).
  double fraction = 0;
  std::optional<double> rung_metric;
  FairnessBook fair;
  // Where the current generation's first report found it (step -1: no report yet): its
  // measured rate of progress is taken from there (measured_rate).
  std::int64_t gen_step = -1;
  double gen_progress = 0;
  // A guaranteed job: the last round's re-check (sia-ctl(1) DEADLINES) -- when it projects
  // the job to finish (its plan's, or at risk its best), and whether it is at risk (no
  // configuration meets its deadline with the margin on what the jobs before it leave).
  std::optional<double> projected_finish;
  bool at_risk = false;
};

struct BookApp {
  AppSpec spec;  // without its template
  std::string identity;
  double submit_time = 0;
  std::int64_t order = 0;           // its first trial's submission order
  std::vector<std::string> trials;  // in submission order
  std::vector<int> bracket;         // each trial's bracket (hyperband_brackets), as trials
  std::vector<int> phases;          // each bracket's phase (one bracket unless hyperband)
  FairnessBook fair;
  // Sets `bracket` and `phases` (all at phase 0) from the spec and the trials.
  void init_brackets();
  // The trial's bracket (0 for a name that is not one of its trials); a search through the
  // trials only for hyperband.
  int bracket_of(const std::string& trial) const;
  int phase(int b = 0) const { return phases.at(static_cast<std::size_t>(b)); }
};

// A trial's metric in its latest report (a finite number), if any.
std::optional<double> latest_metric(const BookJob& job, const std::string& metric);
// What successive halving ranks a trial on: its metric at the rung, else its latest.
std::optional<double> trial_metric(const BookJob& job, const std::string& metric);

// A recorded identity as reasons and explanations name it: "client:alice" of
// "client:alice (key ...)" -- never the key.
std::string identity_name(const std::string& identity);

// Seconds since the job's current workers last spoke (their last report -- "done"
// included, so a job that does not exit after it is caught too -- else the start its node
// confirmed), at `now`; 0 when it is not running or no start of it was confirmed.
double silent_for(const BookJob& job, double now);

struct BookNode {
  std::string name;
  bool up = false;
  double last_seen = 0;  // last time it answered (0: never)
  double last_check = 0;
  std::string error;
  std::int64_t delivered_round = 0;
  std::string delivery_error;
};

struct Rejection {
  std::string job;
  std::string identity;
  double time = 0;
  std::string reason;
};

// A journal record type JobBook::apply reads (a job request's too); the others it skips.
bool known_record_type(const std::string& type);

class JobBook {
 public:
  // Applies one record; returns false when it changed nothing (a duplicate report, an
  // event for an ended job, a type this version does not know).
  bool apply(const nlohmann::json& record);

  std::int64_t seq() const { return seq_; }
  std::int64_t round() const { return round_; }
  double last_round_time() const { return last_round_time_; }

  const std::map<std::string, BookJob>& jobs() const { return jobs_; }
  const BookJob* find(const std::string& job) const;
  const std::map<std::string, BookApp>& apps() const { return apps_; }
  const BookApp* find_app(const std::string& app) const;
  // A trial of a successive-halving (or hyperband) app that reached its phase's budget (of
  // its bracket): it waits, out of the schedule, until every live trial of the phase is
  // there (or has ended).
  bool at_rung(const BookJob& job) const;
  // Trial `trial`'s AppRef as the policies see it (goodput matrix rows; for hyperband its
  // bracket's successive halving).
  AppRef app_ref(const BookApp& app, const std::string& trial) const;
  // Queued and running jobs, in submission order.
  std::vector<const BookJob*> active() const;
  const std::map<std::string, BookNode>& nodes() const { return nodes_; }
  const std::deque<Rejection>& rejections() const { return rejections_; }
  // Forgets the jobs that ended before `cutoff` (seconds since the epoch); their names stay
  // taken (retired). Returns their names, sorted. Not a journal record: it is made before a
  // snapshot, and the same call after a replay forgets the same jobs.
  std::vector<std::string> forget_ended_before(double cutoff);
  bool retired(const std::string& name) const { return retired_.count(name) > 0; }

  // Next unread byte of (node, job)'s reports file.
  std::int64_t report_next(const std::string& node, const std::string& job) const;
  const std::map<std::pair<std::string, std::string>, std::int64_t>& report_offsets() const {
    return report_next_;
  }
  bool inbox_seen(const std::string& file) const { return inbox_.count(file) > 0; }
  // Forgets inbox files that are gone (they can no longer be seen twice).
  void forget_inbox_except(const std::set<std::string>& present);

  // The last round's documents (data parts; null before the first round).
  const nlohmann::json& last_cluster() const { return last_cluster_; }
  const nlohmann::json& last_allocation() const { return last_allocation_; }
  const nlohmann::json& last_placement() const { return last_placement_; }
  // The nodes the last round kept out of training for reservations.
  const std::set<std::string>& last_reserved() const { return last_reserved_; }

  // The job as the scheduler's stages see it at wall-clock time `now`; the progress it
  // needs (target_progress) is its progress over the fraction of its training its workers
  // last reported, once they reported one (else the catalog's).
  JobState job_state(const BookJob& job, double now) const;

  nlohmann::json to_json() const;
  static JobBook from_json(const nlohmann::json& data, const std::string& file);
  void set_seq(std::int64_t seq) { seq_ = seq; }

 private:
  bool apply_submit(const nlohmann::json& r);
  bool apply_report(const nlohmann::json& r);
  bool apply_round(const nlohmann::json& r);
  bool apply_delivered(const nlohmann::json& r);
  bool apply_app_phase(const nlohmann::json& r);
  void apply_round_fairness(const nlohmann::json& f);
  // A trial's rung metric, from report `rep`, once it reached its app's phase budget.
  void note_rung(BookJob& b, const nlohmann::json& rep);
  // Takes in where report `rep` (from `node`, taken in at `time`) says the job is: its
  // step, progress and fraction, and, from its current generation, that it speaks.
  void take_position(BookJob& b, const nlohmann::json& rep, const std::string& node, double time);

  std::int64_t seq_ = 0;
  std::int64_t round_ = 0;
  double last_round_time_ = 0;
  std::int64_t next_order_ = 1;
  std::map<std::string, BookJob> jobs_;
  std::map<std::string, BookApp> apps_;
  std::map<std::string, BookNode> nodes_;
  std::map<std::pair<std::string, std::string>, std::int64_t> report_next_;
  std::set<std::string> inbox_;
  std::deque<Rejection> rejections_;
  std::set<std::string> retired_;  // names of forgotten jobs
  nlohmann::json last_cluster_;
  nlohmann::json last_allocation_;
  nlohmann::json last_placement_;
  std::set<std::string> last_reserved_;
};

// When `job` is placed but was never started on its report node because that node's last
// delivery failed (sia-run apply refused the placement, say): the seconds since the job was
// placed on that node, at `now`. nullopt otherwise (not placed, started there, or the
// node's last delivery went through). Such a job is "undelivered", not running, and the
// hung-job timer (controller.hung_timeout) counts for it as for a silent one.
std::optional<double> undelivered_for(const JobBook& book, const BookJob& job, double now);

// Finish-time fairness, rho = T_sh / T_id (policy/fairness_estimate.hpp). A finished job's
// is measured: its JCT over its last T_id; an active job's is the last round's estimate;
// none without an estimate, and for a job that ended otherwise (a stopped trial's is its
// app's). An app's: once all its trials ended and one finished, from its submission to its
// last trial's end over its last T_id; while it runs, the estimate; none otherwise.
// A live job's estimate is never earlier than its age at `now` (0: as the round left it).
std::optional<double> job_rho(const BookJob& job, double now = 0);
std::optional<double> app_rho(const JobBook& book, const BookApp& app, double now = 0);
// A running job's measured rate of progress (progress units per second, as the goodput
// matrix counts progress) on the GPUs it runs on: progress per step over its current
// generation's reports (from the first to the latest; with one, over its whole life) over
// the latest report's step_time (one without: the mean step time of its reports on these
// GPUs at the nearest local batch, scaled). nullopt until its current workers reported.
std::optional<double> measured_rate(const BookJob& job);

// Records (without "seq"; the state store numbers them).
nlohmann::json make_submit(const std::string& inbox, const std::string& identity, double time,
                           const std::vector<JobSpec>& jobs, const std::vector<AppSpec>& apps = {},
                           const std::optional<RunAs>& run_as = std::nullopt);
nlohmann::json make_app_phase(const std::string& app, int phase, double time, int bracket = 0);
nlohmann::json make_rejected(const std::string& inbox, const std::string& identity, double time,
                             const std::vector<std::string>& jobs, const std::string& reason);
nlohmann::json make_job_request(JobRequest type, const std::string& inbox,
                                const std::string& identity, double time,
                                const std::vector<std::string>& jobs);
nlohmann::json make_report(const std::string& node, const std::string& job, std::int64_t offset,
                           std::int64_t next, const nlohmann::json& report);
nlohmann::json make_node_seen(const std::string& node, bool up, const std::string& error,
                              double time);
nlohmann::json make_job_ended(const std::string& job, Lifecycle state, const std::string& reason,
                              std::optional<int> exit_status, double time,
                              const std::optional<LogTail>& log_tail = std::nullopt);
// The round record's fairness field: the units, and every job and app the round scheduled
// with its figure in `est` when it has one.
nlohmann::json make_round_fairness(int units, const std::set<std::string>& jobs,
                                   const std::set<std::string>& apps, const FairnessEstimate& est);

// `deadlines`: the guaranteed jobs' re-check, {job: {"finish": t, "at_risk": bool}};
// `reserved`: the nodes controller.reservations kept out of the round (empty: left out).
nlohmann::json make_round(std::int64_t round, double time, const nlohmann::json& cluster,
                          const nlohmann::json& allocation, const nlohmann::json& placement,
                          const nlohmann::json& models,
                          const nlohmann::json& fairness = nullptr,   // null: left out
                          const nlohmann::json& deadlines = nullptr,  // null: left out
                          const std::set<std::string>& reserved = {});
nlohmann::json make_job_silent(const std::string& job, double silent_for, double time);
nlohmann::json make_job_peer_lost(const std::string& job, const std::string& node,
                                  std::int64_t generation, int attempt, double time);
// The delivered record of a node's answer: its RunPlan's actions (job, action, round as
// generation, warning when there is one); `plan` null when it did not acknowledge.
nlohmann::json make_delivered(std::int64_t round, const std::string& node, bool ok,
                              const std::string& error, const nlohmann::json& plan);

// The job as its nodes get it in the Jobs document of a delivery: its JobSpec, and in its
// state the step it reached (so a node that finds no checkpoint says so), its checkpoint
// directory, CHECKPOINT_ROOT/JOB ("" root: none, the node's own choice), and for a trial
// of an app its phase's budget as stop_fraction (its workers stop there).
nlohmann::json node_job_json(const JobBook& book, const BookJob& job,
                             const std::string& checkpoint_root);

// Placed <-> the job's entry of a Placement document.
nlohmann::json placed_to_json(const Placed& p);
Placed placed_from_json(const nlohmann::json& j);
std::string describe_placed(const std::optional<Placed>& p);  // "t4 t4-0:0,1" or "waiting"

}  // namespace sia::ctl
