// Report records: turning the report lines read from the nodes into the journal's report
// records, one per line the book does not hold yet -- deduplicated by (node, job, byte
// offset) against the book and within the batch. A line that is not JSON (or nested too
// deeply) is kept as a null report (so its offset is taken) with a warning. A node speaks
// only for the jobs it ran: lines about a job the book does not know, has ended, or never
// placed on that node are not journaled; one null record per (node, job) takes their
// offsets, with a warning for the unknown and foreign ones. Each record carries `time`, the
// controller's clock when it took the line in (how long a job has been silent is
// measured from it). The round engine and the daemon's report journal both use it.
// Thread-safety: pure (warn is called on the caller's thread).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"

namespace sia::ctl {

std::vector<nlohmann::json> report_records(const JobBook& book,
                                           const std::vector<ReportLine>& lines, double time,
                                           const std::function<void(const std::string&)>& warn);

}  // namespace sia::ctl
