#include "exec/run_as.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace sia::exec {

std::optional<os::Account> job_account(const std::optional<RunAs>& run_as,
                                       const std::string& node) {
  if (!run_as) return std::nullopt;
  const os::Account self = os::current_account();
  if (run_as->user.empty()) {
    if (self.uid == 0 && !run_as->admin) {
      throw Error(ExitStatus::no_perm,
                  "node " + node + ": " + run_as->submitter +
                      " has no user in the allow-list and is no admin; its jobs do not run "
                      "as root");
    }
    return std::nullopt;
  }
  std::optional<os::Account> a = os::find_account(run_as->user);
  if (!a) {
    throw Error(ExitStatus::no_perm,
                "node " + node + ": account " + run_as->user + " does not exist");
  }
  if (a->uid == 0 && !run_as->admin) {
    throw Error(ExitStatus::no_perm, "node " + node + ": " + run_as->submitter +
                                         " may not run "
                                         "jobs as root (" +
                                         a->name + "): only an admin may");
  }
  if (self.uid != 0 && self.uid != a->uid) {
    throw Error(ExitStatus::no_perm, "node " + node + ": cannot run the job as " + a->name +
                                         ": sia-run runs as " + self.name + ", not root");
  }
  return a;
}

void give_job_files(const JobLaunch& launch, const std::string& log_dir) {
  std::optional<os::Account> a;
  try {
    a = job_account(launch.run_as, launch.node);
  } catch (const Error&) {
    return;  // the launcher fails the job with the reason
  }
  if (!a) return;
  // The checkpoint directory's lock, which sia-run made before the workers (they open it
  // for writing), and its generation file, with the directory.
  const std::string lock = launch.ckpt_dir.empty() ? "" : launch.ckpt_dir + "/.lock";
  const std::string generation = launch.ckpt_dir.empty() ? "" : launch.ckpt_dir + "/generation";
  for (const auto& path : {launch.ckpt_dir, lock, generation, launch.report, log_dir}) {
    std::error_code ec;
    if (!path.empty() && std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      os::give_to(path, *a);
    }
  }
}

}  // namespace sia::exec
