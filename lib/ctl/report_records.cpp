#include "ctl/report_records.hpp"
#include "core/json_limits.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace sia::ctl {

using nlohmann::json;

namespace {

// Whether `node` ever ran `job` (placed there now or in its history), so that its
// reports say something about it.
bool ran_there(const BookJob& b, const std::string& node) {
  auto on = [&](const std::optional<Placed>& p) {
    return p && std::any_of(p->nodes.begin(), p->nodes.end(),
                            [&](const NodeGpus& ng) { return ng.node == node; });
  };
  return on(b.placed) || std::any_of(b.history.begin(), b.history.end(),
                                     [&](const auto& h) { return on(h.placed); });
}

}  // namespace

std::vector<json> report_records(const JobBook& book, const std::vector<ReportLine>& lines,
                                 double time, const std::function<void(const std::string&)>& warn) {
  std::vector<json> records;
  std::map<std::pair<std::string, std::string>, std::int64_t> seen;
  // Lines about jobs a node has no say on: one record per (node, job) takes their offsets.
  struct Ignored {
    std::int64_t offset = 0, next = 0;
    int lines = 0;
    std::string why;
  };
  std::map<std::pair<std::string, std::string>, Ignored> ignored;
  for (const auto& l : lines) {
    const std::int64_t next =
        l.next > l.offset ? l.next : l.offset + static_cast<std::int64_t>(l.line.size()) + 1;
    auto key = std::make_pair(l.node, l.job);
    const std::int64_t known = std::max(book.report_next(l.node, l.job), seen[key]);
    if (l.offset < known) continue;  // a duplicate
    seen[key] = next;
    const BookJob* b = book.find(l.job);
    std::string why = !b                       ? "a job the controller does not know"
                      : is_ended(b->state)     ? ""
                      : !ran_there(*b, l.node) ? "a job never placed on that node"
                                               : "";
    if (!b || is_ended(b->state) || !why.empty()) {
      Ignored& ig = ignored[key];
      if (ig.lines++ == 0) ig.offset = l.offset;
      ig.next = next;
      ig.why = why;
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
  for (const auto& [key, ig] : ignored) {
    if (warn && !ig.why.empty()) {
      warn("node " + key.first + ": job " + key.second + ": " + std::to_string(ig.lines) +
           " report line(s) about " + ig.why + "; ignored");
    }
    json r = make_report(key.first, key.second, ig.offset, ig.next, nullptr);
    r["time"] = time;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace sia::ctl
