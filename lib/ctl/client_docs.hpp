// The documents the client subcommands print, built from a JobBook (and the requests still
// waiting in the inbox) -- by the local backend, and by the controller daemon to answer a
// remote client the same way:
//   JobStatusList  {"jobs": [{name, state, identity, run_as, submitted, age, gpu_type, nodes,
//                  gpus, batch_size, local_bsz, accum_steps, restarts, progress, step,
//                  lost_steps, notice, silent_for, reports, reason_code, reason, held_by,
//                  exit_status, ended, app, hparams, class, deadline, projected_finish,
//                  at_risk}], "apps": [...]}, jobs by name; state is also
//                  "submitted" (in the inbox) or "rejected". reason: why an ended job ended; for
//                  the others reason_code (squeue's reasons, in spirit) and a line for people:
//                    inbox      submitted, in the inbox until the next round
//                    new        taken in; no round has considered it yet
//                    held       held (sia-ctl hold) until released
//                    requeue    requeued: the next round stops it; it waits from then on
//                    request    a cancel, hold, release or requeue waits in the inbox
//                    resources  no room: fewer GPUs of any one allowed type are up, or
//                               free, than it needs
//                    priority   there is room, but fairness and goodput put others first
//                    undelivered  placed, but its node's last delivery failed: not
//                               started there
//                    restoring  (re)started; no report from its new workers yet
//                    silent     running, but its workers stopped reporting
//                    finishing  its workers reported done; it ends when they exit
//                    at_risk    a guaranteed job the last round's re-check finds at risk of
//                               missing its deadline (reason: its projected finish)
//                    ""         running as it should (reason: a notice, if any)
//   NodeList       {"nodes": [{name, gpu_type, gpus, address, state: up|down|unknown,
//                  last_seen, error, delivery_error, jobs: ["JOB:GPUS"...], and from the
//                  daemon lease: {fence_after, grace, silence_limit}}]}
//   JobExplanation {job, state, round, placement, run_as, queue_position, waiting,
//                  allocation, note, lines: [...]} -- why the job runs where it runs or why it
//                  waits, from the last round's allocation (with explanations) and placement; a
//                  guaranteed job has a line with its deadline and projected finish; a
//                  failed job whose node said which rank failed also has log_tail {node, rank,
//                  text}: the last lines of that rank's log; a trial of an app also has app
//                  and hparams
// Times are seconds since the epoch (sia-ctl prints them for people in the tables).
// Thread-safety: pure, but for pending_requests(), which reads the inbox.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/state_store.hpp"

namespace sia::ctl {

struct PendingApp {
  AppSpec spec;                         // without its template
  std::vector<std::string> trials;      // the submission's jobs that name it, in order
  std::vector<nlohmann::json> hparams;  // each trial's hyper-parameter values, as trials
};

struct PendingRequest {
  std::string type;  // submit | cancel
  std::string identity;
  double time = 0;
  std::vector<std::string> jobs;
  std::vector<PendingApp> apps;     // a submission's apps
  std::vector<JobSpec> guaranteed;  // a submission's guaranteed jobs (admitted by the client)
};

// The requests waiting in STATE/inbox (local clients' submissions and cancellations), in
// file order. A file a round took in meanwhile, or a malformed one, is left out (the
// round reports it). Reads files: not pure.
std::vector<PendingRequest> pending_requests(const StateStore& store);
// The jobs submitted in `pending` (waiting in the inbox to be taken in).
std::set<std::string> pending_submissions(const std::vector<PendingRequest>& pending);
// The app `name` submitted in `pending` (waiting in the inbox), and its request; null if none.
const PendingApp* find_pending_app(const std::vector<PendingRequest>& pending,
                                   const std::string& name,
                                   const PendingRequest** request = nullptr);

// Status 66 for a named job that is neither known nor pending. A running job whose workers
// have been quiet for more than `silent_after` seconds (controller.silent_after) is flagged
// silent (its reason, and a line of its explanation).
nlohmann::json job_status_list(const JobBook& book, const std::vector<PendingRequest>& pending,
                               const std::vector<std::string>& jobs, double now,
                               double silent_after);
// `live`: what the daemon's hub knows now of the agents, a list of {name, state (up or
// down), gpu_type, gpus, address, last_seen, lease}; it wins over the book (the last
// round's view) and lists agents that connected before any round.
nlohmann::json node_list(const JobBook& book, double now,
                         const nlohmann::json& live = nlohmann::json());
// For the name of an app, its AppExplanation (app_explanation.hpp). `peer_retries`
// (controller.peer_retries) bounds a job's restarts for lost peers: its explanation says
// how many it used.
nlohmann::json job_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                               const std::string& job, double now, double silent_after,
                               int peer_retries);

// The user of a recorded identity: "alice" of "local:alice", of "client:alice (key ...)".
std::string identity_user(const std::string& identity);
// The one name a job's submitter goes by in every USER column (status, history): the
// account the job runs as on its nodes when it switches to one, else identity_user.
std::string job_user(const BookJob& b);

// Which rows of a JobStatusList or JobHistory to keep (sia-ctl status and history).
struct JobFilter {
  std::vector<std::string> states;  // any of them (empty: all)
  std::vector<std::string> users;   // "alice" (any kind) or "client:alice" (empty: all)
  double since = 0;                 // ended at or after it, or not ended (0: all)
};
// Status 64 naming `flag` for a state that is none of queued, running, finished, failed,
// cancelled, stopped, submitted, rejected. Takes comma-separated lists.
std::vector<std::string> parse_state_filter(const std::vector<std::string>& values,
                                            const std::string& flag);
// "--since": seconds since the epoch, a UTC date or time (2026-12-01, 2026-12-01T08:00,
// 2026-12-01T08:00:00Z) or a time ago (90m, 12h, 7d); status 64 otherwise.
double parse_since(const std::string& text, double now, const std::string& flag);
nlohmann::json filter_jobs(nlohmann::json doc, const JobFilter& filter);

// A JobStatusList's app row (see sia-ctl(1), status): its scheduler, phase, trials per
// state, best metric and rho; pending_app_row: the same of an app still in the inbox.
nlohmann::json app_row(const JobBook& book, const BookApp& app);
nlohmann::json pending_app_row(const JobBook& book, const PendingRequest& request,
                               const PendingApp& app);
// A trial's hyper-parameter values as a JSON object ({} for a job that is no trial), and
// as a line for people ("lr=0.001 wd=0.1", values as hparam_text writes them).
nlohmann::json hparams_json(const std::map<std::string, double>& values);
std::string hparams_text(const nlohmann::json& values);

// An envelope around `data`.
nlohmann::json envelope(const std::string& kind, const nlohmann::json& data);

}  // namespace sia::ctl
