// Report records: turning the report lines read from the nodes into the journal's report
// records, one per line the book does not hold yet -- deduplicated by (node, job, byte
// offset) against the book and within the batch. A line that is not JSON (or nested too
// deeply) is kept as a null report (so its offset is taken) with a warning. A node speaks
// only for the jobs placed on it (node_speaks_for): lines about a job the book does not
// know, or that is not placed on that node, are refused -- never journaled, not even their
// offsets (so a node cannot grow the journal by inventing jobs) -- and counted by a
// ForeignReports, which warns once per (node, job) naming both. Lines about a job that has
// ended take one null record per (node, job) (their offsets), silently -- but a failed
// job's are journaled as they are (the step it reached, job_book.hpp). Each record
// carries `time`, the controller's clock when it took the line in (how long a job has been
// silent is measured from it). The round engine and the daemon's report journal both use it.
// Thread-safety: report_records is pure but for `foreign`; a ForeignReports belongs to one
// thread (warn is called on it).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"

namespace sia::ctl {

// True when `node` may speak for `job`: the job is placed on it now, or was in any earlier
// placement the controller gave it (its history). A generation there may still be running
// or stopping -- a move is two-phase, a restarted controller replays older placements, and
// under load a job can be re-placed several times before its old workers have exited --
// so its reports still count and its "finished" must too: a job that finished on a node it
// has since left would otherwise stay running forever. A node the job was never placed on
// has no say. Reports and run states (finished, failed) obey it.
bool node_speaks_for(const BookJob& job, const std::string& node);
// True when the job's current placement uses `node`.
bool placed_on(const BookJob& job, const std::string& node);

// Refused report lines: counted, with one warning per (node, job) -- at most kMaxWarned
// pairs are remembered; past that, refusals are counted without a warning of their own.
class ForeignReports {
 public:
  static constexpr std::size_t kMaxWarned = 1000;
  explicit ForeignReports(std::function<void(const std::string&)> warn = {})
      : warn_(std::move(warn)) {}
  void refuse(const std::string& node, const std::string& job, int lines, const std::string& why);
  std::int64_t refused() const { return refused_; }  // lines refused so far

 private:
  std::function<void(const std::string&)> warn_;
  std::set<std::pair<std::string, std::string>> warned_;
  std::int64_t refused_ = 0;
  bool said_full_ = false;
};

std::vector<nlohmann::json> report_records(const JobBook& book,
                                           const std::vector<ReportLine>& lines, double time,
                                           const std::function<void(const std::string&)>& warn,
                                           ForeignReports& foreign);

}  // namespace sia::ctl
