#include "ctl/client_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "core/error.hpp"
#include "ctl/admission.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/history.hpp"
#include "ctl/job_requests.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/slurm_history.hpp"
#include "ctl/submission.hpp"

namespace sia::ctl {

using nlohmann::json;

RemoteBackendFactory& remote_backend_factory() {
  static RemoteBackendFactory factory;
  return factory;
}

std::unique_ptr<ClientBackend> make_client_backend(const Settings& config) {
  if (!config.client.connect.empty()) {
    if (!remote_backend_factory()) {
      throw Error(ExitStatus::usage, "client.connect is " + config.client.connect +
                                         ", but this sia-ctl has no control channel client; "
                                         "leave it empty to act on the local state directory");
    }
    return remote_backend_factory()(config);
  }
  return std::make_unique<LocalBackend>(config, local_identity());
}

LocalBackend::LocalBackend(const Settings& config, std::string identity)
    : config_(config), store_(config.controller.state_dir), identity_(std::move(identity)) {
  if (config.controller.state_dir.empty()) {
    throw Error(ExitStatus::config,
                "no state directory: give --state-dir, or set controller.state_dir, "
                "SIA_CTL_STATE_DIR or HOME");
  }
}

JobBook LocalBackend::load() const {
  if (!store_.exists()) return JobBook{};
  return store_.load(false, nullptr);
}

JobBook LocalBackend::load_existing() const {
  store_.check_exists();
  return load();
}

// Admission of the submission's guaranteed jobs (admission.hpp) on the book and inbox.
void LocalBackend::admit(Submission& submission, const JobBook& book,
                         const std::vector<PendingRequest>& pending) const {
  if (!has_guaranteed(submission)) return;
  Catalog catalog(config_.controller.catalog.empty() ? default_catalog_dir()
                                                     : config_.controller.catalog);
  admit_submission(submission, book, pending, config_, catalog, store_.path(kProfilesFile),
                   wall_clock());
}

json LocalBackend::submit(const Submission& asked) {
  // The admitted jobs read and this one queued under the admission lock (admission.hpp).
  // A refused submission leaves nothing: the directory made for the lock goes with it.
  const bool fresh = !store_.exists();
  std::optional<exec::StateLock> admission;
  if (has_guaranteed(asked)) admission.emplace(store_.admission_lock("sia-ctl submit"));
  auto pending = pending_requests(store_);  // before the book: a request the round takes
  JobBook book = load();                    // in meanwhile is then counted twice, not missed
  Submission submission = asked;
  try {
    check_names_free(book, pending, asked);
    admit(submission, book, pending);
  } catch (const Error&) {
    if (fresh && admission) {
      // The lock file, then the directory if nothing else is there; a submission waiting
      // on the lock sees its file gone and locks the path afresh (os::wait_lock_file).
      ::unlink(store_.path("admission.lock").c_str());
      admission.reset();
      ::rmdir(store_.root().c_str());
    }
    throw;
  }
  std::vector<std::string> names;
  for (const auto& s : submission.jobs) names.push_back(s.name);
  store_.create();
  const double now = wall_clock();
  store_.write_inbox(inbox_request("submit", identity_, now, submission_body(submission)));
  std::vector<PendingApp> apps;  // as status reads them back from the inbox
  for (const auto& a : submission.apps) {
    PendingApp x{a, {}, {}};
    for (const auto& j : submission.jobs) {
      if (j.app != a.name) continue;
      x.trials.push_back(j.name);
      x.hparams.push_back(hparams_json(j.hparams));
    }
    apps.push_back(std::move(x));
  }
  pending.push_back({"submit", identity_, now, names, std::move(apps), {}});
  return job_status_list(book, pending, names, now, config_.controller.silent_after);
}

void LocalBackend::check_submit(const Submission& asked) {
  JobBook book = load();
  auto pending = pending_requests(store_);
  check_names_free(book, pending, asked);
  Submission submission = asked;
  admit(submission, book, pending);
}

json LocalBackend::status(const std::vector<std::string>& jobs) {
  JobBook book = load_existing();
  return job_status_list(book, pending_requests(store_), jobs, wall_clock(),
                         config_.controller.silent_after);
}

json LocalBackend::request(JobRequest request, const std::vector<std::string>& jobs) {
  JobBook book = load_existing();
  auto pending = pending_requests(store_);
  const double now = wall_clock();
  check_job_request(book, pending, request, jobs);  // before anything is written
  store_.create();
  store_.write_inbox(inbox_request(to_string(request), identity_, now, {{"jobs", jobs}}));
  pending.push_back({to_string(request), identity_, now, jobs, {}, {}});
  return job_status_list(book, pending, jobs, now, config_.controller.silent_after);
}

json LocalBackend::nodes() {
  return node_list(load_existing(), wall_clock());
}

json LocalBackend::explain(const std::string& job) {
  JobBook book = load_existing();
  return job_explanation(book, pending_requests(store_), job, wall_clock(),
                         config_.controller.silent_after, config_.controller.peer_retries);
}

// With [slurm] enabled, Slurm's job ids and sacct's figures beside (slurm_history.hpp).
json LocalBackend::history() {
  json doc = job_history(load_existing(), wall_clock());
  if (config_.slurm.enabled) {  // Slurm's job ids and sacct's figures beside sia's
    slurm::ProcessRunner runner(config_.slurm);
    add_slurm_history(doc, store_.root(), runner);
  }
  return doc;
}

}  // namespace sia::ctl
