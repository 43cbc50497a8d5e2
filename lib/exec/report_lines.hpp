// Report lines: reading the workers' reports back out of a sia-run state directory, for
// `sia-run reports` and for whoever forwards them to the controller (the agent, the
// controller's local node driver). Every job's ROOT/jobs/JOB/reports.jsonl is append-only,
// so a line's byte offset is its identity: a reader asks for the lines of JOB that start at
// or after OFFSET (the `next` of the last line it has) and gets each complete line once.
// A last line without its newline is still being written and is not returned; a complete
// line that is not a JSON object is skipped with a warning (its bytes are passed over, so
// `next` moves beyond it once a later line is read).
// Thread-safety: pure reads of files that only grow; safe beside writing workers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/tool.hpp"
#include "exec/state_dir.hpp"

namespace sia::exec {

struct ReportLineRecord {
  std::string job;
  std::int64_t offset = 0;  // byte offset of the line's first character
  std::int64_t next = 0;    // offset just past its newline: where the next line starts
  std::string line;         // the line without its newline (a JSON object)
};

struct ReportReadOptions {
  std::map<std::string, std::int64_t> after;  // job -> first offset wanted (default 0)
  std::size_t max_bytes_per_job = 4u << 20;   // read at most this much per job and call
};

// The complete report lines of every job of `state` from the offsets asked for, jobs by
// name, lines in file order. Warnings (a malformed line, a file shorter than the offset
// asked for) are appended to `warnings` when given.
std::vector<ReportLineRecord> read_report_lines(const StateDir& state,
                                                const ReportReadOptions& options,
                                                std::vector<std::string>* warnings = nullptr);

// "JOB=OFFSET" -> {JOB, OFFSET}; status 64 with the flag named otherwise.
std::pair<std::string, std::int64_t> parse_after(const std::string& text);

// {"job", "offset", "next", "report"}: one line of `sia-run reports -o jsonl`.
nlohmann::json report_line_to_json(const ReportLineRecord& r);

}  // namespace sia::exec
