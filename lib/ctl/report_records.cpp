#include "ctl/report_records.hpp"
#include "core/json_limits.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace sia::ctl {

using nlohmann::json;

namespace {

bool on(const std::optional<Placed>& p, const std::string& node) {
  return p && std::any_of(p->nodes.begin(), p->nodes.end(),
                          [&](const NodeGpus& ng) { return ng.node == node; });
}

}  // namespace

bool placed_on(const BookJob& b, const std::string& node) {
  return on(b.placed, node);
}

bool node_speaks_for(const BookJob& b, const std::string& node) {
  return on(b.placed, node) ||
         std::any_of(b.history.begin(), b.history.end(),
                     [&](const HistoryEntry& h) { return on(h.placed, node); });
}

void ForeignReports::refuse(const std::string& node, const std::string& job, int lines,
                            const std::string& why) {
  refused_ += lines;
  if (!warn_) return;
  auto key = std::make_pair(node, job);
  if (warned_.count(key)) return;
  if (warned_.size() >= kMaxWarned) {
    if (!said_full_) {
      warn_("node " + node + ": more than " + std::to_string(kMaxWarned) +
            " (node, job) pairs sent reports they may not: further ones are refused "
            "without a warning");
    }
    said_full_ = true;
    return;
  }
  warned_.insert(key);
  warn_("node " + node + ": job " + job + ": report lines refused: " + why +
        " (a node speaks only for the jobs placed on it; not journaled)");
}

std::vector<json> report_records(const JobBook& book, const std::vector<ReportLine>& lines,
                                 double time, const std::function<void(const std::string&)>& warn,
                                 ForeignReports& foreign) {
  std::vector<json> records;
  std::map<std::pair<std::string, std::string>, std::int64_t> seen;
  // Lines about ended jobs: one record per (node, job) takes their offsets.
  struct Ignored {
    std::int64_t offset = 0, next = 0;
    int lines = 0;
  };
  std::map<std::pair<std::string, std::string>, Ignored> ignored;
  // Lines a node has no say on: refused, by (node, job) -> (lines, why).
  std::map<std::pair<std::string, std::string>, std::pair<int, std::string>> refused;
  for (const auto& l : lines) {
    const std::int64_t next =
        l.next > l.offset ? l.next : l.offset + static_cast<std::int64_t>(l.line.size()) + 1;
    auto key = std::make_pair(l.node, l.job);
    const std::int64_t known = std::max(book.report_next(l.node, l.job), seen[key]);
    if (l.offset < known) continue;  // a duplicate
    seen[key] = next;
    const BookJob* b = book.find(l.job);
    if (!b || !node_speaks_for(*b, l.node)) {
      auto& r = refused[key];
      ++r.first;
      r.second = !b ? "the controller knows no such job" : "the job is not placed on this node";
      continue;
    }
    if (is_ended(b->state) && b->state != Lifecycle::failed) {  // a failed one's: its last step
      Ignored& ig = ignored[key];
      if (ig.lines++ == 0) ig.offset = l.offset;
      ig.next = next;
      continue;
    }
    json rep = parse_json_bounded(l.line);
    if (rep.is_discarded()) {
      if (warn) {
        warn("node " + l.node + ": job " + l.job + ": offset " + std::to_string(l.offset) +
             ": a report that is not JSON, or nested too deeply; skipped");
      }
      rep = nullptr;
    }
    json r = make_report(l.node, l.job, l.offset, next, rep);
    r["time"] = time;
    records.push_back(std::move(r));
  }
  for (const auto& [key, r] : refused) foreign.refuse(key.first, key.second, r.first, r.second);
  for (const auto& [key, ig] : ignored) {
    json r = make_report(key.first, key.second, ig.offset, ig.next, nullptr);
    r["time"] = time;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace sia::ctl
