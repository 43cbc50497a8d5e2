// The account a job's processes run as on this node (the rule of core/run_as.hpp), and
// handing the job's own files to it. sia-run applies it when it starts a job (the
// checkpoint directory, the report file and the log directory become the account's) and
// when it starts each rank (LocalLauncher: the rank's log is the account's and the rank
// runs as it).
// Thread-safety: functions of their arguments and the account databases.
#pragma once

#include <optional>
#include <string>

#include "core/run_as.hpp"
#include "exec/job_launch.hpp"
#include "os/account.hpp"

namespace sia::exec {

// nullopt: sia-run's own user. Status 77 with the reason the job cannot run here:
//   "node t4-0: account alice does not exist"
//   "node t4-0: cannot run the job as alice: sia-run runs as bob, not root"
//   "node t4-0: client:bob may not run jobs as root (root): only an admin may"
//   "node t4-0: client:bob has no user in the allow-list and is no admin; its jobs do not
//    run as root"
// Status 69 when the account database cannot be read.
std::optional<os::Account> job_account(const std::optional<RunAs>& run_as, const std::string& node);

// Gives `launch`'s checkpoint directory (with its .lock and generation files), report
// file and log directory to its account (nothing without one): directories 0700, files
// 0600, each through a descriptor (os/safe_open.hpp), so a link the job planted at one of
// the names is refused (status 77), never followed. An account that job_account() refuses
// is left to the launcher, which fails the job with the reason. Status 73 when a file
// cannot be given.
void give_job_files(const JobLaunch& launch, const std::string& log_dir);

}  // namespace sia::exec
