// ClientBackend: what the client subcommands (submit, status, cancel, hold, release,
// requeue, nodes, explain)
// ask of a controller, whatever the way to it. Every call returns a whole document
// envelope ({"apiVersion", "kind", "metadata", "data"}) that the command prints as JSON or
// renders as a table (client_render.hpp), or throws sia::Error with the status to exit
// with (65 a refused submission, 66 an unknown job, 69 an unreachable controller...).
//   LocalBackend  acts on a state directory on this machine: submissions (their guaranteed
//                 jobs admitted first, admission.hpp) and requests on
//                 jobs become request files in STATE/inbox that the next round takes in; reads
//                 load the snapshot and journal without taking the lock.
// A remote backend (the control channel's client RPC) implements the same interface and
// is chosen by make_client_backend() when [client] connect (or --connect) is set.
// Thread-safety: one thread per backend object.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/config.hpp"
#include "ctl/job_log.hpp"
#include "ctl/state_store.hpp"
#include "ctl/submission.hpp"

namespace sia::ctl {

class ClientBackend {
 public:
  virtual ~ClientBackend() = default;
  // Jobs (and apps, whose trials are among the jobs) already read and validated by the
  // client; returns a JobStatusList of the jobs.
  virtual nlohmann::json submit(const Submission& submission) = 0;
  nlohmann::json submit(const std::vector<JobSpec>& jobs) { return submit(Submission{jobs, {}}); }
  // Everything submit() checks (names never used, nor waiting; the controller's own checks
  // of a remote submission), nothing written: submit --dry-run. Throws as submit() would.
  virtual void check_submit(const Submission& submission) = 0;
  // JobStatusList of the named jobs (all jobs when empty).
  virtual nlohmann::json status(const std::vector<std::string>& jobs) = 0;
  // JobStatusList of the named jobs after the request (job_requests.hpp says which
  // requests are refused).
  virtual nlohmann::json request(JobRequest request, const std::vector<std::string>& jobs) = 0;
  virtual nlohmann::json nodes() = 0;                          // NodeList
  virtual nlohmann::json explain(const std::string& job) = 0;  // JobExplanation
  virtual nlohmann::json history() = 0;                        // JobHistory (history.hpp)
  // JobLog: a part of a rank's log (job_log.hpp), read on the node that holds it. This
  // default refuses (status 69): a backend that cannot reach the nodes' logs.
  virtual nlohmann::json logs(const LogQuery& query);
};

class LocalBackend : public ClientBackend {
 public:
  LocalBackend(const Settings& config, std::string identity);
  using ClientBackend::submit;
  nlohmann::json submit(const Submission& submission) override;
  void check_submit(const Submission& submission) override;
  nlohmann::json status(const std::vector<std::string>& jobs) override;
  nlohmann::json request(JobRequest request, const std::vector<std::string>& jobs) override;
  nlohmann::json nodes() override;
  nlohmann::json explain(const std::string& job) override;
  nlohmann::json history() override;
  // Through the [nodes] logs command on the node that holds the rank (local_logs.cpp).
  nlohmann::json logs(const LogQuery& query) override;

 private:
  void admit(Submission& submission, const JobBook& book,
             const std::vector<PendingRequest>& pending) const;
  JobBook load() const;           // an empty book when the state directory is missing
  JobBook load_existing() const;  // 66 when it is missing (read-only commands)
  Settings config_;
  StateStore store_;
  std::string identity_;
};

// The factory of remote backends, set by whoever links the control channel in; null:
// none (a configured connect endpoint is then a usage error).
using RemoteBackendFactory = std::function<std::unique_ptr<ClientBackend>(const Settings&)>;
RemoteBackendFactory& remote_backend_factory();

// LocalBackend, or the remote one when config.client.connect is set.
std::unique_ptr<ClientBackend> make_client_backend(const Settings& config);

}  // namespace sia::ctl
