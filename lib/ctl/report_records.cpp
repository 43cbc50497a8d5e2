#include "ctl/report_records.hpp"
#include "core/json_limits.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace sia::ctl {

using nlohmann::json;

std::vector<json> report_records(const JobBook& book, const std::vector<ReportLine>& lines,
                                 double time, const std::function<void(const std::string&)>& warn) {
  std::vector<json> records;
  std::map<std::pair<std::string, std::string>, std::int64_t> seen;
  for (const auto& l : lines) {
    const std::int64_t next =
        l.next > l.offset ? l.next : l.offset + static_cast<std::int64_t>(l.line.size()) + 1;
    auto key = std::make_pair(l.node, l.job);
    const std::int64_t known = std::max(book.report_next(l.node, l.job), seen[key]);
    if (l.offset < known) continue;  // a duplicate
    json rep = parse_json_bounded(l.line);
    if (rep.is_discarded()) {
      if (warn) {
        warn("node " + l.node + ": job " + l.job + ": offset " + std::to_string(l.offset) +
             ": a report that is not JSON; skipped");
      }
      rep = nullptr;
    }
    seen[key] = next;
    json r = make_report(l.node, l.job, l.offset, next, rep);
    r["time"] = time;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace sia::ctl
