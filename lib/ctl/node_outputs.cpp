#include "ctl/node_outputs.hpp"

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"

namespace sia::ctl {

using nlohmann::json;

json node_document(const std::string& out, const std::string& what, const std::string& kind) {
  auto docs = parse_documents(out, what, {kind});
  if (docs.size() != 1)
    throw Error(ExitStatus::data, what + ": expected one " + kind + " document");
  return docs.front().data().json();
}

std::vector<ReportLine> node_report_lines(const std::string& node, const std::string& out,
                                          std::string* error) {
  std::vector<ReportLine> lines;
  std::size_t pos = 0;
  while (pos < out.size()) {
    std::size_t nl = out.find('\n', pos);
    if (nl == std::string::npos) nl = out.size();
    std::string line = out.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    json j = parse_json_bounded(line);
    if (j.is_discarded() || !j.is_object() || !j.contains("job") || !j["job"].is_string() ||
        !j.contains("offset") || !j["offset"].is_number_integer() || !j.contains("report") ||
        !j["report"].is_object()) {
      if (error) *error = "node " + node + ": reports: a line that is not {job, offset, report}";
      continue;
    }
    ReportLine rl;
    rl.node = node;
    rl.job = j["job"].get<std::string>();
    rl.offset = j["offset"].get<std::int64_t>();
    rl.line = j["report"].dump();
    if (j.contains("next") && j["next"].is_number_integer()) {
      rl.next = j["next"].get<std::int64_t>();
    }
    lines.push_back(std::move(rl));
  }
  return lines;
}

std::map<std::string, std::vector<JobOnNode>> jobs_on_nodes(const std::vector<NodeStatus>& st) {
  std::map<std::string, std::vector<JobOnNode>> out;
  for (const auto& s : st) {
    if (!s.ok || !s.status.is_object() || !s.status.contains("jobs") ||
        !s.status["jobs"].is_array()) {
      continue;
    }
    for (const auto& j : s.status["jobs"]) {
      if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
      JobOnNode x;
      x.node = s.node;
      if (j.contains("state") && j["state"].is_string()) {
        x.state = exec::parse_run_state(j["state"].get<std::string>());
      }
      if (j.contains("round") && j["round"].is_number_integer()) x.generation = j["round"];
      if (j.contains("exit_status") && j["exit_status"].is_number_integer()) {
        x.exit_status = j["exit_status"].get<int>();
      }
      if (j.contains("reason") && j["reason"].is_string()) x.reason = j["reason"];
      x.cancelled = j.value("cancelled", false) == true;
      if (j.contains("failed_rank")) {
        x.log_tail = log_tail_from_json(
            {{"node", s.node}, {"rank", j["failed_rank"]}, {"text", j.value("log_tail", json())}});
      }
      out[j["name"].get<std::string>()].push_back(std::move(x));
    }
  }
  return out;
}

}  // namespace sia::ctl
