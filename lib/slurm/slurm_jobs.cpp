#include "slurm/slurm_jobs.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>

#include "core/error.hpp"

namespace sia::slurm {

namespace {

long parse_uid(const std::string& user) {
  auto open = user.rfind('(');
  if (open == std::string::npos || user.back() != ')') return -1;
  long uid = -1;
  const char* b = user.data() + open + 1;
  const char* e = user.data() + user.size() - 1;
  auto [p, ec] = std::from_chars(b, e, uid);
  return ec == std::errc() && p == e ? uid : -1;
}

SlurmJob parse_job(std::string_view line, std::size_t line_no) {
  Fields f = split_fields(line);
  const std::string where = "slurm: scontrol show job: line " + std::to_string(line_no);
  SlurmJob j;
  j.id = f.get("JobId");
  if (j.id.empty()) throw Error(ExitStatus::data, where + ": expected JobId=ID");
  const std::string at = where + " (job " + j.id + ")";
  // HetJobId comes before JobName, the first text a user chooses: one after it is not read.
  for (const auto& [key, value] : f.items) {
    if (key == "JobName") break;
    if (key == "HetJobId") j.het_job_id = value;
  }
  j.name = f.get("JobName");
  bool after_user = false;
  for (const auto& [key, value] : f.items) {
    if (key == "UserId") after_user = true;
    if (after_user && key == "SubmitTime") {
      j.submit_time = parse_slurm_time(value);
      break;
    }
  }
  j.user_id = parse_uid(f.get("UserId"));
  if (j.user_id < 0) throw Error(ExitStatus::data, at + ": UserId: expected NAME(UID)");
  j.partition = f.get("Partition");
  j.state = f.get("JobState");
  j.comment = f.get("Comment");
  if (j.comment == "(null)") j.comment.clear();
  try {
    j.nodes = expand_hostlist(f.get("NodeList"));
  } catch (const Error& e) {
    throw Error(ExitStatus::data, at + ": NodeList: " + e.what());
  }
  // The details: "Nodes=LIST CPU_IDs=... Mem=... GRES=gpu:...", one per group of nodes,
  // before the free-text fields (Comment, Command, WorkDir...): none is read after
  // Comment, and a node outside NodeList is skipped, so that no text a user chose adds
  // GPUs to a node its job does not hold.
  std::vector<std::string> detail_nodes;
  for (const auto& [key, value] : f.items) {
    if (key == "Comment") break;
    if (key == "Nodes") {
      try {
        detail_nodes = expand_hostlist(value);
      } catch (const Error& e) {
        throw Error(ExitStatus::data, at + ": Nodes: " + e.what());
      }
    } else if (key == "GRES" && !detail_nodes.empty()) {
      auto gpus = parse_gpu_gres(value, at + ": GRES");
      for (const auto& n : detail_nodes) {
        if (std::find(j.nodes.begin(), j.nodes.end(), n) == j.nodes.end()) continue;
        auto& held = j.gpus_per_node[n];
        held.insert(held.end(), gpus.begin(), gpus.end());
      }
      detail_nodes.clear();
    }
  }
  return j;
}

}  // namespace

double parse_slurm_time(std::string_view text) {
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':') {
    return 0;
  }
  auto num = [&](std::size_t at, std::size_t n, int& out) {
    auto [p, ec] = std::from_chars(text.data() + at, text.data() + at + n, out);
    return ec == std::errc() && p == text.data() + at + n;
  };
  std::tm tm{};
  if (!num(0, 4, tm.tm_year) || !num(5, 2, tm.tm_mon) || !num(8, 2, tm.tm_mday) ||
      !num(11, 2, tm.tm_hour) || !num(14, 2, tm.tm_min) || !num(17, 2, tm.tm_sec)) {
    return 0;
  }
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  return t == static_cast<std::time_t>(-1) ? 0 : static_cast<double>(t);
}

bool SlurmJob::holds_nodes() const {
  static const char* const kHolding[] = {"RUNNING",   "SUSPENDED", "COMPLETING", "CONFIGURING",
                                         "STAGE_OUT", "SIGNALING", "RESIZING"};
  return std::any_of(std::begin(kHolding), std::end(kHolding),
                     [&](const char* s) { return state == s; });
}

long SlurmJob::gpus_on(const std::string& node) const {
  auto it = gpus_per_node.find(node);
  long n = 0;
  if (it != gpus_per_node.end()) {
    for (const auto& g : it->second) n += g.count;
  }
  return n;
}

std::vector<std::string> show_jobs_args() {
  return {"-d", "-o", "show", "job"};
}

std::vector<SlurmJob> parse_jobs(std::string_view text) {
  std::vector<SlurmJob> jobs;
  for_each_record(text, [&](std::string_view line, std::size_t line_no) {
    jobs.push_back(parse_job(line, line_no));
  });
  return jobs;
}

}  // namespace sia::slurm
