// What makes a job submittable: a usable name (a JobSpec name other than "." and "..",
// never used before in this controller's state), a command for sia-run to start, and a
// model the catalog knows (or the job's own profile). Both the client (before it writes
// anything) and the round (for a request found in the inbox) check it.
// Thread-safety: pure, given a catalog used by one thread.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/job_spec.hpp"
#include "model/catalog.hpp"

namespace sia::ctl {

// Throws Error(65) naming `where` ("job.toml: jobs[1]") and the field.
void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where);

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

// Reads JobSpec or Jobs documents (TOML or JSON; "-" = stdin) into specs; every file and
// job is validated before anything is returned. Duplicate names across files: 65. With a
// cluster, every job is also checked for admission (check_admissible).
std::vector<JobSpec> read_submissions(const std::vector<std::string>& files, const Catalog& catalog,
                                      const Cluster* cluster = nullptr);

// "local:NAME" for the user running the program.
std::string local_identity();

}  // namespace sia::ctl
