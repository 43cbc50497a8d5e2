// Admission of guaranteed jobs in the controller (issue 34; sia-ctl(1) DEADLINES). At
// sia-ctl submit -- the local client before it writes the inbox, the control channel's
// SUBMIT before it journals -- a guaranteed job is admitted only if lib/deadline's
// plan_admission finds a configuration that finishes its remaining work by its deadline,
// planned controller.deadline_margin over, on the GPUs the guaranteed jobs admitted before
// it need, of those that controller.reservations do not hold at any time between now and
// the latest deadline weighed (round/reservations.hpp, gpus_unreserved). Its goodput model is the
// round's estimator's (controller_estimator: the catalog or the job's own profile, the profile
// store), read off its row as the simulator reads it (deadline/row_table.hpp). The jobs admitted
// before -- the book's active guaranteed jobs, then those waiting in the inbox, in submission order
// -- are planned again first with what they have measured, each holding its cheapest meeting
// configuration (or, at risk, its fastest); then the submission's guaranteed jobs, in order. Two
// submissions at once (two `sia-ctl submit`, or one beside serve's SUBMIT) are admitted one after
// the other: each reads the admitted jobs and queues its own under the state directory's admission
// lock (StateStore::admission_lock), so both are never admitted on the same GPUs. Refused:
// Error(65), one line naming the job and the deadline and saying by when it could finish at best
// (and, where reservations hold GPUs before then, how many); nothing is queued. With
// Submission::or_best_effort the job is submitted as best-effort instead (its deadline kept as a
// wish the policy may weigh). Thread-safety: one thread (an Estimator).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/submission.hpp"
#include "deadline/admission.hpp"
#include "model/catalog.hpp"
#include "model/estimator.hpp"

namespace sia::ctl {

// Whether `s` has a guaranteed job with a deadline (admission has something to decide).
bool has_guaranteed(const Submission& s);

struct AdmissionScene {
  const Cluster& cluster;
  Estimator& estimator;
  double now = 0;
  double margin = deadline::kDefaultDeadlineMargin;
  // The GPUs per type admission counts on: the cluster's (empty: all of them) less those
  // reservations hold before the deadlines (scene_capacity).
  std::map<std::string, int> capacity;
};

// The GPUs per type `scene` admits on (its capacity, else the whole cluster's).
std::map<std::string, int> scene_capacity(const AdmissionScene& scene);

// A guaranteed job's admission question from the estimator's row of `state` (its spec's
// deadline; `held`: admitted before). Error(65) naming the job when its remaining work is
// unknown (no catalog model's target progress nor a report of its own).
deadline::GuaranteedJob admission_question(JobState& state, const AdmissionScene& scene, bool held);

// The guaranteed jobs admitted before: the book's active ones, then the inbox's.
std::vector<deadline::GuaranteedJob> admitted_jobs(const JobBook& book,
                                                   const std::vector<PendingRequest>& pending,
                                                   const AdmissionScene& scene);

// Admits the guaranteed jobs of `s` after `admitted` (above): their plans, in order, a job
// turned best-effort (or_best_effort) left out; Error(65) for a refused one.
std::vector<deadline::OrderedAdmission> admit_guaranteed(
    Submission& s, std::vector<deadline::GuaranteedJob> admitted, const AdmissionScene& scene);

// The above as a controller asks it: on the configured cluster (Error(65) for a guaranteed
// job when none is) less what controller.reservations hold from `now` to the latest
// deadline weighed (a bad reservations file: Error(78)), with its estimator and profile
// store and controller.deadline_margin, at `now`. Nothing is estimated for a submission without a
// guaranteed job.
std::vector<deadline::OrderedAdmission> admit_submission(
    Submission& s, const JobBook& book, const std::vector<PendingRequest>& pending,
    const Settings& config, const Catalog& catalog, const std::string& profiles_file, double now);

}  // namespace sia::ctl
