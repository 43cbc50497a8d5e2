// Node outputs: reading what a node's commands print (the [nodes] templates of
// sia-config(5), sia-run's status, apply, logs and reports) and what a node's status says
// about its jobs. Untrusted text from another machine: anything malformed is refused with
// sia::Error (status 65) or skipped with an error message, never more.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"
#include "exec/job_status.hpp"

namespace sia::ctl {

// The data of the one document of `kind` (RunStatus, RunPlan, RunLog) a node command
// printed; `what` names the command in messages ("node t4-0: status").
nlohmann::json node_document(const std::string& out, const std::string& what,
                             const std::string& kind);

// The report lines `sia-run reports -o jsonl` printed on `node`: one {job, offset, next,
// report} object a line. A line that is not one is skipped and `*error` says so.
std::vector<ReportLine> node_report_lines(const std::string& node, const std::string& out,
                                          std::string* error);

// One job as a node's RunStatus lists it.
struct JobOnNode {
  std::string node;
  std::optional<exec::RunState> state;  // nullopt: one this version does not know
  std::int64_t generation = 0;
  std::optional<int> exit_status;
  std::string reason;
  bool cancelled = false;  // failed: cancelled outside sia (a Slurm job scancel'ed by its user)
  std::optional<LogTail> log_tail;  // a failed job: its failing rank and that rank's log tail
};

// Every job any node that answered reports, by name.
std::map<std::string, std::vector<JobOnNode>> jobs_on_nodes(const std::vector<NodeStatus>& st);

}  // namespace sia::ctl
