// NodeBackend: what an agent acts on -- the node's sia-run state directory, behind an
// interface so that tests can count applies without starting processes. Operations
// (apply an ASSIGN, checkpoint-stop every job) run one at a time and asynchronously: the
// agent's loop keeps heartbeating while jobs take their grace period to checkpoint, and
// collects each operation's outcome once with take_outcome().
// Thread-safety: one thread (the agent's loop).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel/protocol.hpp"
#include "exec/rank_log.hpp"

namespace sia::channel {

class NodeBackend {
 public:
  enum class Op { apply, stop };
  struct Outcome {
    Op op = Op::apply;
    bool ok = true;
    int exit_status = 0;
    nlohmann::json plan;  // RunPlan data, when there is one
    std::string error;    // why it failed
  };

  virtual ~NodeBackend() = default;

  // Starts applying a Placement document with its Jobs document (only when !busy()).
  virtual void begin_apply(const nlohmann::json& placement, const nlohmann::json& jobs) = 0;
  // Starts checkpoint-stopping every live job, without holding them: a later apply that
  // places them here starts them again (only when !busy()).
  virtual void begin_stop_all(const std::string& reason) = 0;
  virtual bool busy() = 0;
  // The outcome of the operation that ended, once.
  virtual std::optional<Outcome> take_outcome() = 0;

  // sia-run's RunStatus data for the node.
  virtual nlohmann::json run_status() = 0;
  // Report lines of every job from the offsets given (jobs not named: from 0), at most
  // `max_bytes_per_job` per job; `next` gets each job's offset after its last line.
  virtual std::vector<ReportLine> read_reports(const Offsets& from, std::size_t max_bytes_per_job,
                                               Offsets& next) = 0;
  // How far each job's reports.jsonl goes.
  virtual Offsets report_ends() = 0;
  // A part of a rank's log: RunLog data (exec/rank_log.hpp), at most 1 MiB. Throws
  // sia::Error: 64 a rank out of range, 66 no log here. This default: 69 (no logs).
  virtual nlohmann::json read_log(const exec::LogRequest& request);
};

}  // namespace sia::channel
