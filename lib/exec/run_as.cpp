#include "exec/run_as.hpp"

#include "core/error.hpp"
#include "os/safe_open.hpp"

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
  // Each through a descriptor opened without following a link (os/safe_open.hpp): a link or
  // a second hard link the job planted at one of these names is refused, never given.
  auto give_dir = [&](const std::string& path) {
    if (path.empty()) return os::Fd();
    os::Fd d = os::open_dir(path);
    os::give_fd(d.get(), *a, os::kPrivateDir, path);
    return d;
  };
  // The checkpoint directory, with the lock sia-run made before the workers (they open it
  // for writing) and its generation file.
  if (os::Fd ckpt = give_dir(launch.ckpt_dir)) {
    for (const char* name : {".lock", "generation"}) {
      os::give_in(ckpt.get(), name, *a, os::kPrivateFile, launch.ckpt_dir + "/" + name);
    }
  }
  if (!launch.report.empty()) {
    auto [dir, name] = os::split_path(launch.report);
    os::give_in(os::open_dir(dir).get(), name, *a, os::kPrivateFile, launch.report);
  }
  give_dir(log_dir);
}

}  // namespace sia::exec
