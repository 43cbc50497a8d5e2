// The control channel's messages between sia-ctl's hub and the sia-run agents and clients:
// one JSON frame per message, {"v": 1, "type": T, ...}.
//   agent -> hub   READY, ACK, REPORT, HEARTBEAT, BYE, LOG (the answer to a LOG_FETCH)
//   hub -> agent   ASSIGN, HEARTBEAT (with the report offsets the controller has stored),
//                  ERROR, BYE, LOG_FETCH (read a part of a rank's log for a client)
//   client -> hub  SUBMIT, STATUS, CANCEL, HOLD, RELEASE, REQUEUE, NODES, EXPLAIN, HISTORY,
//                  LOGS (a Request)
//   hub -> client  REPLY, ERROR
// encode() writes a message as one line of JSON (invalid UTF-8 in a report line is
// replaced, never thrown on). decode() trusts nothing: text that is not JSON, nested too
// deeply, not an object, a missing or mistyped field, an unknown type or a bad name is a
// ProtocolError (status 65) naming the field ("ASSIGN: round: expected an integer, got a
// string"); a "v" other than kProtocolVersion is a VersionError, which the hub answers with
// an ERROR. Unknown fields are ignored, so a minor addition needs no new version.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel/lease.hpp"
#include "core/error.hpp"

namespace sia::channel {

inline constexpr int kProtocolVersion = 1;

// A message that cannot be read (status 65).
class ProtocolError : public Error {
 public:
  explicit ProtocolError(const std::string& message) : Error(ExitStatus::data, message) {}
};

// A message of another major protocol version (status 65).
class VersionError : public ProtocolError {
 public:
  VersionError(const std::string& message, std::int64_t version)
      : ProtocolError(message), version_(version) {}
  std::int64_t version() const { return version_; }

 private:
  std::int64_t version_;
};

// Per job: a byte offset in the job's reports.jsonl.
using Offsets = std::map<std::string, std::int64_t>;

// What a node offers, from its cluster file entry.
struct Inventory {
  std::string gpu_type;
  int gpus = 0;
  std::string address;
};

// READY: an agent (re)connects, says what it is and what runs on it, and its lease
// (channel/lease.hpp: when its jobs stop without the controller). An older agent says no
// lease: the controller assumes one.
struct Ready {
  std::string node;
  Inventory inventory;
  nlohmann::json run_status = nlohmann::json::object();  // sia-run's RunStatus data
  Offsets offsets;  // how far each job's reports.jsonl goes (its size in whole lines)
  std::optional<Lease> lease;
};

// ASSIGN: the node's part of a round. (round, seq) identify it: a repeat is answered from
// the agent's cache and never applied twice.
struct Assign {
  std::int64_t round = 0;
  std::int64_t seq = 0;
  nlohmann::json placement = nlohmann::json::object();  // a Placement document (envelope)
  nlohmann::json jobs = nlohmann::json::object();       // a Jobs document with the commands
};

// ACK: the agent applied (or failed to apply) ASSIGN (round, seq).
struct Ack {
  std::int64_t round = 0;
  std::int64_t seq = 0;
  bool ok = true;
  int exit_status = 0;        // sia-run apply's status
  nlohmann::json plan;        // RunPlan data (null when apply failed)
  nlohmann::json run_status;  // RunStatus data after applying (null when unknown)
  std::string error;          // why it failed
};

// One line of a job's reports.jsonl; `offset` (its first byte) is its identity.
struct ReportLine {
  std::string job;
  std::int64_t offset = 0;
  std::string line;  // without the newline
};

// REPORT: new report lines, in file order per job.
struct Report {
  std::string node;
  std::vector<ReportLine> lines;
};

// HEARTBEAT both ways. From an agent: its node, each job's state and whether it is
// applying (and its RunStatus when a job's state changed). From the hub: `acked`, how far
// the controller has stored each job's reports.
struct Heartbeat {
  std::string node;
  nlohmann::json jobs = nlohmann::json::object();  // job -> sia-run state
  bool busy = false;
  Offsets acked;
  // From an agent: its RunStatus data when `jobs` changed since its last heartbeat (a job
  // ended: its reason, exit status and failing rank's log tail), else null.
  nlohmann::json run_status;
};

// BYE: the peer goes away. An agent says whether it checkpoint-stopped its jobs first.
struct Bye {
  std::string node;
  std::string reason;
  bool stopped = false;
  nlohmann::json run_status;  // null when not sent
};

// LOG_FETCH: the hub asks an agent for a part of a rank's log (a client's LOGS request).
struct LogFetch {
  std::string id;  // echoed by the LOG answer
  std::string job;
  int rank = 0;
  int tail = -1;                 // >= 0: the last `tail` lines; else the bytes from `offset`
  std::int64_t offset = 0;       // with tail < 0
  std::int64_t limit = 1 << 20;  // at most this many bytes (agents cap it at 1 MiB)
};

// LOG: an agent's answer to LOG_FETCH `id`: RunLog data (`sia-run logs -o json`: offset,
// next, size, truncated, text, ...), or why not with the status (64 a rank out of range,
// 66 no log on this node).
struct LogData {
  std::string node;
  std::string id;
  bool ok = true;
  int status = 0;
  nlohmann::json log;  // RunLog data; null when !ok
  std::string error;
};

enum class RequestKind {
  submit,
  status,
  cancel,
  hold,
  release,
  requeue,
  nodes,
  explain,
  history,
  logs
};
const char* to_string(RequestKind k);  // "SUBMIT", ...

// A client's request. `args` is the operation's input, by convention:
//   SUBMIT {"jobs": [JobSpec documents]}, STATUS {"jobs": [names]} (empty: all),
//   CANCEL, HOLD, RELEASE, REQUEUE {"jobs": [names]}, NODES {}, EXPLAIN {"job": name},
//   HISTORY {}, LOGS {"job": name, "rank": N, "tail": N (-1: from offset), "offset": BYTES}
//   (the hub answers it once the agent of the rank's node has: see Hub::set_log_planner).
struct Request {
  RequestKind kind = RequestKind::status;
  std::string id;      // echoed by the REPLY
  std::string client;  // claimed name (used only where no CURVE key says who it is)
  nlohmann::json args = nlohmann::json::object();
};

// REPLY to a Request: a document, or an error with the exit status the client exits with.
struct Reply {
  std::string id;
  bool ok = true;
  int status = 0;
  nlohmann::json document;  // null when there is none
  std::string error;
};

// ERROR: the hub could not take a message. Codes: "version", "malformed", "not_ready" (say
// READY first), "refused" (the key may not do this), "too_large" (a request over the
// controller's max_request_bytes).
struct ErrorMessage {
  std::string code;
  std::string error;
};

using Message = std::variant<Ready, Assign, Ack, Report, Heartbeat, Bye, Request, Reply,
                             ErrorMessage, LogFetch, LogData>;

std::string encode(const Message& message);
Message decode(std::string_view frame);

// Whether `frame` holds "type":"READY" as encode() writes it, found without parsing (so
// at the cost of a scan, whatever its size). A hint, not a decode: a frame that says so
// may be anything; the hub uses it only for peers it trusts already (ipc://), to let an
// agent's READY past the request size limit.
bool says_ready(std::string_view frame);

// "READY", "ASSIGN", ..., "SUBMIT", ... for logs.
std::string type_name(const Message& message);

// A node or client name: 1 to 253 characters of [A-Za-z0-9._-], not starting with '.'.
bool valid_peer_name(std::string_view name);

}  // namespace sia::channel
