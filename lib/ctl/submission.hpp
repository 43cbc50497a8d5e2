// What makes a job submittable: a usable name (a JobSpec name other than "." and "..",
// never used before in this controller's state), a command for sia-run to start, and a
// model the catalog knows (or the job's own profile). Both the client (before it writes
// anything) and the round (for a request found in the inbox) check it.
// A submission may hold apps (App documents, core/app_spec.hpp): their trials, expanded
// from the template, are among its jobs, each naming its app; an app's name shares the
// namespace of job names (never reused) and a job may name only an app submitted with it.
// Thread-safety: pure, given a catalog used by one thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_spec.hpp"
#include "core/cluster.hpp"
#include "core/job_spec.hpp"
#include "ctl/config.hpp"
#include "model/catalog.hpp"

namespace sia::ctl {

// What one job may weigh (controller.max_command_bytes and max_job_bytes, sia-config(5)):
// its command line (the arguments' bytes summed) and its JobSpec as JSON. A job is copied
// into the journal, the snapshot, every round it is scheduled in and every node that runs
// it, so one huge job would cost the whole cluster.
struct JobLimits {
  std::size_t command_bytes = 64 << 10;
  std::size_t job_bytes = 128 << 10;
};

// The limits of `controller` (max_command_bytes, max_job_bytes).
JobLimits job_limits(const ControllerSettings& controller);

// Throws Error(65) naming `where` ("job.toml: jobs[1]") and the field, a job over `limits`
// included ("SUBMIT: jobs[0]: command: 70000 bytes, over the limit of 65536
// (controller.max_command_bytes)").
void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where,
                         const JobLimits& limits = {});

// Admission, as sbatch refuses a request no partition can satisfy: why `spec` can never run
// on `cluster`, as "FIELD: why", or "" when some GPU type of the cluster can hold it. A
// type can hold a job when the job allows it, its model (or own profile) has measurements
// there, it is data-parallel there (hybrid-parallel jobs -- pipeline stages -- are beyond
// what sia-run starts), and the type has the GPUs the job needs at least (gpus for a rigid
// job, else min_gpus). With `strict` (at submission), a listed allowed GPU type the
// cluster lacks is a reason too; a queued job is failed only when no type can hold it.
std::string unschedulable_reason(const JobSpec& spec, const Catalog& catalog,
                                 const Cluster& cluster, bool strict);

// Throws Error(65) "where: FIELD: why" for a job unschedulable_reason(strict) refuses.
void check_admissible(const JobSpec& spec, const Catalog& catalog, const Cluster& cluster,
                      const std::string& where);

struct Submission {
  std::vector<JobSpec> jobs;  // the apps' trials among them
  std::vector<AppSpec> apps;
  // sia-ctl submit --or-best-effort: a guaranteed job admission refuses is submitted as
  // best-effort instead (ctl/admission.hpp). Carried by a request as "or_best_effort".
  bool or_best_effort = false;
};

// Status 65 naming `where` unless every job's app is one of `s.apps`, every app has trials
// and no name (of a job or an app) is given twice.
void validate_apps(const Submission& s, const std::string& where);

// A submission as a request carries it -- {"jobs": [JobSpec data...], "apps": [App data...]}
// (the inbox file's body, the channel's SUBMIT arguments) -- and back. Parsing checks the
// fields only (validate_submission and validate_apps do the rest); errors name `body`.
nlohmann::json submission_body(const Submission& s);
Submission parse_submission_body(const Node& body);

// Reads JobSpec, Jobs or App documents (TOML or JSON; "-" = stdin); an App's trials are
// expanded from its template (required here). Every file and job is validated before
// anything is returned. Duplicate names across files: 65. With a cluster, every job is
// also checked for admission (check_admissible).
Submission read_submissions(const std::vector<std::string>& files, const Catalog& catalog,
                            const Cluster* cluster = nullptr, const JobLimits& limits = {});

// Gives every job of `s` without a workdir `cwd` (the submitter's working directory, so
// that a relative command -- ["python3", "train.py"] -- runs where it was submitted from).
void record_workdir(Submission& s, const std::string& cwd);

// Fixes every job's deadline as submitted `now` (a duration becomes a time); Error(65)
// naming the job for a deadline at or before `now`, or a guaranteed job without one.
// `deadline` and `job_class` (sia-ctl submit --deadline, --class), when given, replace
// every job's own first.
void stamp_deadlines(Submission& s, double now, const std::string& deadline = "",
                     const std::string& job_class = "");

// "local:NAME" for the user running the program.
std::string local_identity();

}  // namespace sia::ctl
