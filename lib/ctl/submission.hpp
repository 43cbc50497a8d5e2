// What makes a job submittable: a usable name (a JobSpec name other than "." and "..",
// never used before in this controller's state), a command for sia-run to start, and a
// model the catalog knows (or the job's own profile). Both the client (before it writes
// anything) and the round (for a request found in the inbox) check it.
// Thread-safety: pure, given a catalog used by one thread.
#pragma once

#include <string>
#include <vector>

#include "core/job_spec.hpp"
#include "model/catalog.hpp"

namespace sia::ctl {

// Throws Error(65) naming `where` ("job.toml: jobs[1]") and the field.
void validate_submission(const JobSpec& spec, const Catalog& catalog, const std::string& where);

// Reads JobSpec or Jobs documents (TOML or JSON; "-" = stdin) into specs; every file and
// job is validated before anything is returned. Duplicate names across files: 65.
std::vector<JobSpec> read_submissions(const std::vector<std::string>& files,
                                      const Catalog& catalog);

// "local:NAME" for the user running the program.
std::string local_identity();

}  // namespace sia::ctl
