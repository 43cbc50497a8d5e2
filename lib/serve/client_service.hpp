// ClientService: how `sia-ctl serve` answers the clients' requests on the control channel
// (SUBMIT, STATUS, CANCEL, NODES, EXPLAIN), with the same documents as the local client
// backend (lib/ctl/client_docs.hpp), built from the daemon's JobBook.
//   SUBMIT  {"jobs": [JobSpec data or documents]}: every job is checked as `sia-ctl submit`
//           checks it (lib/ctl/submission.hpp) and its name must be new; then one submit
//           record -- with the submitting identity and key -- is journaled (fsync'd) before
//           the REPLY says so: an acknowledged submission survives kill -9. A refused one
//           changes nothing (status 65).
//   CANCEL  {"jobs": [names]}: unknown names are status 66 and nothing is cancelled;
//           otherwise one cancel record is journaled; the next round stops the jobs.
//   STATUS  {"jobs": [names]} (all when empty), NODES {}, EXPLAIN {"job": name}.
//   LOGS    is answered by the hub with serve/log_requests.hpp, not here.
// Requests still waiting in STATE/inbox (local submissions) count as pending.
// Thread-safety: one thread (the hub's poll(), inside the daemon's loop).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "channel/identity.hpp"
#include "channel/protocol.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/state_store.hpp"
#include "model/catalog.hpp"

namespace sia::serve {

class ClientService {
 public:
  ClientService(const ctl::Config& config, const ctl::StateStore& store, ctl::JobBook& book,
                std::function<double()> now = {});

  channel::Reply handle(const channel::Identity& who, const channel::Request& request);

  // True once after a submission into a cluster where nothing ran (the daemon then runs
  // a round at once).
  bool take_round_wanted();

 private:
  nlohmann::json submit(const channel::Identity& who, const nlohmann::json& args);
  nlohmann::json cancel(const channel::Identity& who, const nlohmann::json& args);
  // A unique name for a request journaled at `now`: it never names a file in the inbox.
  std::string request_name(double now);

  ctl::Config config_;
  const ctl::StateStore& store_;
  ctl::JobBook& book_;
  std::function<double()> now_;
  std::unique_ptr<Catalog> catalog_;
  std::int64_t requests_ = 0;
  bool round_wanted_ = false;
};

// The identity recorded with a request: "client:alice (key K)".
std::string recorded_identity(const channel::Identity& who);

}  // namespace sia::serve
