// ClientService: how `sia-ctl serve` answers the clients' requests on the control channel
// (SUBMIT, STATUS, CANCEL, HOLD, RELEASE, REQUEUE, NODES, EXPLAIN), with the same documents as the
// local client backend (lib/ctl/client_docs.hpp), built from the daemon's JobBook.
//   SUBMIT  {"jobs": [JobSpec data or documents]}: every job is checked as `sia-ctl submit`
//           checks it (lib/ctl/submission.hpp) and its name must be new; then one submit
//           record -- with the submitting identity and key -- is journaled (fsync'd) before
//           the REPLY says so: an acknowledged submission survives kill -9. A refused one
//           changes nothing (status 65).
//   CANCEL, HOLD, RELEASE, REQUEUE  {"jobs": [names]}: checked as ctl/job_requests.hpp
//           says (66 an unknown name, 65 holding an ended job; nothing is done then),
//           and owner-only (require_owner: 77 for a job another client submitted);
//           otherwise one record is journaled for the jobs the book has (the next round
//           acts on it), and a request file after their submission for jobs still waiting
//           in STATE/inbox.
//   STATUS  {"jobs": [names]} (all when empty), NODES {}, EXPLAIN {"job": name}, HISTORY {}.
//           EXPLAIN, a job's details, is owner-only too; STATUS lists every job.
//   LOGS    is answered by the hub with serve/log_requests.hpp, not here (owner-only).
// Requests still waiting in STATE/inbox (local submissions) count as pending.
// Thread-safety: one thread (the hub's poll(), inside the daemon's loop).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "channel/identity.hpp"
#include "channel/protocol.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/state_store.hpp"
#include "model/catalog.hpp"

namespace sia::serve {

// The request kind of a request on jobs, and back (nullopt for SUBMIT, STATUS, ...).
channel::RequestKind request_kind_of(ctl::JobRequest request);
std::optional<ctl::JobRequest> job_request_of(channel::RequestKind kind);

class ClientService {
 public:
  ClientService(const ctl::Settings& config, const ctl::StateStore& store, ctl::JobBook& book,
                std::function<double()> now = {});

  channel::Reply handle(const channel::Identity& who, const channel::Request& request);

  // True once after a submission into a cluster where nothing ran (the daemon then runs
  // a round at once).
  bool take_round_wanted();

  // What NODES adds of the agents as they are now (ctl::node_list's `live`); unset: none.
  void set_live_nodes(std::function<nlohmann::json()> live) { live_nodes_ = std::move(live); }

 private:
  nlohmann::json submit(const channel::Identity& who, const nlohmann::json& args);
  nlohmann::json job_request(const channel::Identity& who, ctl::JobRequest request,
                             const nlohmann::json& args);
  // A unique name for a request journaled at `now`: it never names a file in the inbox.
  std::string request_name(double now);
  std::function<nlohmann::json()> live_nodes_;

  ctl::Settings config_;
  const ctl::StateStore& store_;
  ctl::JobBook& book_;
  std::function<double()> now_;
  std::unique_ptr<Catalog> catalog_;
  std::int64_t requests_ = 0;
  bool round_wanted_ = false;
};

// The identity recorded with a request: "client:alice (key K)".
std::string recorded_identity(const channel::Identity& who);

// Who submitted `job`: the book's recorded identity, else its submission's still waiting
// in STATE/inbox; "" for a job neither knows.
std::string job_owner(const ctl::JobBook& book, const std::vector<ctl::PendingRequest>& pending,
                      const std::string& job);

// Owner-only requests: `who` may act on or look into a job submitted as `owner` when it is
// the same client (by name, whatever its key), an allow-list admin (admin = true), or a
// peer without CURVE (ipc://, the controller's own user). Status 77 otherwise: "CANCEL: job
// \"a\" belongs to client:alice; client:bob may not act on it (only its submitter or an admin
// key may)". An unknown job (owner "") passes: the request's own check answers it.
void require_owner(const channel::Identity& who, const std::string& job, const std::string& owner,
                   std::string_view what);

}  // namespace sia::serve
