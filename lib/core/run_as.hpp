// RunAs: the local account a job's processes run as on its nodes, and who asked for it.
// The controller fills it in at submit from the submitting client's identity (the
// allow-list maps a client key to an account: [[client]] user = "alice"), journals it with
// the job, and sends it to the nodes in the job's Jobs state ("run_as"):
//   {"user": "alice", "submitter": "client:alice", "admin": false}
//   user       the account ("" : the node's own user, i.e. whoever runs sia-run there)
//   submitter  who submitted the job, for messages
//   admin      the submitter may run jobs as the node's own user even when that is root
// The rule a node applies (exec/run_as.hpp): never root unless the submitter is an admin.
// With a user, switch to it (only a node running as root can, unless it already is that
// user; a user of uid 0 only for an admin); without one, run as the node's own user, except
// that a node running as root refuses a job whose submitter is no admin. A job with
// no "run_as" at all (cron mode, a controller from before the field) runs as the node's own
// user, as it always did.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/node.hpp"

namespace sia {

struct RunAs {
  std::string user;
  std::string submitter;
  bool admin = false;

  bool operator==(const RunAs&) const = default;
};

// A plausible local account name: 1 to 32 characters of [A-Za-z0-9._-], not starting with
// '-' (what useradd accepts, plus upper case; a trailing '$' for machine accounts).
bool valid_account_name(std::string_view name);

nlohmann::json run_as_to_json(const RunAs& r);
// Status of `n` when user is not an account name or a field has the wrong type.
RunAs parse_run_as(const Node& n);

// How a job's RunAs reads in status and explain: "alice", or "the node's user (admin
// client:root)", or "the node's user unless root (client:bob has no user)" -- an account
// name only when the job switches to that account (status's USER column relies on it).
std::string describe_run_as(const RunAs& r);

}  // namespace sia
