// Journaling report lines as they arrive: the controller daemon stores every new report
// line (deduplicated by node, job and byte offset, as the round engine does) in one
// journal commit (one fsync) before the hub tells the agent they are stored, so kill -9
// of the controller loses no report it confirmed.
// Thread-safety: one thread (the writer holding the state lock).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"
#include "ctl/report_records.hpp"
#include "ctl/state_store.hpp"

namespace sia::serve {

// Commits the report records of the lines `book` does not hold yet (ctl/report_records.hpp),
// taken in at `time`; returns how many records it journaled. Lines a node has no say on
// are refused into `foreign` (never journaled).
int journal_reports(const ctl::StateStore& store, ctl::JobBook& book,
                    const std::vector<ctl::ReportLine>& lines, double time,
                    const std::function<void(const std::string&)>& warn,
                    ctl::ForeignReports& foreign);

}  // namespace sia::serve
