// The controller's journal records and the value types they carry (job_book.hpp: the
// record formats): the make_* functions, Placed and LogTail <-> JSON.
#include <algorithm>
#include <climits>

#include "ctl/job_book.hpp"
#include "ctl/record_fields.hpp"
#include "exec/job_launch.hpp"

namespace sia::ctl {

using nlohmann::json;

int Placed::gpus() const {
  int n = 0;
  for (const auto& ng : nodes) n += static_cast<int>(ng.gpus.size());
  return n;
}

bool Placed::operator==(const Placed& o) const {
  if (gpu_type != o.gpu_type || batch != o.batch || nodes.size() != o.nodes.size()) {
    return false;
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].node != o.nodes[i].node || nodes[i].gpus != o.nodes[i].gpus) return false;
  }
  return true;
}

json placed_to_json(const Placed& p) {
  json nodes = json::array();
  for (const auto& ng : p.nodes) nodes.push_back({{"name", ng.node}, {"gpus", ng.gpus}});
  json out = {{"gpu_type", p.gpu_type}, {"nodes", nodes}};
  put_batch_setting(out, p.batch);
  return out;
}

Placed placed_from_json(const json& j) {
  Placed p;
  p.gpu_type = str_of(j, "gpu_type");
  for (const auto& n : arr_of(j, "nodes")) {
    NodeGpus ng;
    ng.node = str_of(n, "name");
    for (const auto& g : arr_of(n, "gpus")) {
      if (g.is_number_integer()) ng.gpus.push_back(g.get<int>());
    }
    p.nodes.push_back(std::move(ng));
  }
  // The journal's own record, read leniently as its other fields are.
  p.batch.global = global_batch_of(num_of(j, "batch_size")).value_or(0);
  p.batch.local = static_cast<int>(std::clamp<std::int64_t>(int_of(j, "local_bsz"), 0, INT32_MAX));
  p.batch.accum_steps =
      static_cast<int>(std::clamp<std::int64_t>(int_of(j, "accum_steps"), 0, kMaxAccumSteps));
  return p;
}

std::string describe_placed(const std::optional<Placed>& p) {
  if (!p) return "waiting";
  std::string out = p->gpu_type;
  for (const auto& ng : p->nodes) out += " " + ng.node + ":" + exec::join_ints(ng.gpus);
  return out;
}

json make_submit(const std::string& inbox, const std::string& identity, double time,
                 const std::vector<JobSpec>& jobs, const std::vector<AppSpec>& apps,
                 const std::optional<RunAs>& run_as) {
  json list = json::array();
  for (const auto& s : jobs) list.push_back(job_spec_to_json(s));
  json r = {
      {"type", "submit"}, {"inbox", inbox}, {"identity", identity}, {"time", time}, {"jobs", list}};
  if (!apps.empty()) {
    json a = json::array();
    for (AppSpec x : apps) {
      x.trial_template.reset();  // its trials are the jobs
      a.push_back(app_spec_to_json(x));
    }
    r["apps"] = std::move(a);
  }
  if (run_as) r["run_as"] = run_as_to_json(*run_as);
  return r;
}

json make_app_phase(const std::string& app, int phase, double time, int bracket) {
  json r = {{"type", "app-phase"}, {"app", app}, {"phase", phase}, {"time", time}};
  if (bracket > 0) r["bracket"] = bracket;
  return r;
}

json make_rejected(const std::string& inbox, const std::string& identity, double time,
                   const std::vector<std::string>& jobs, const std::string& reason) {
  return {{"type", "rejected"}, {"inbox", inbox}, {"identity", identity},
          {"time", time},       {"jobs", jobs},   {"reason", reason}};
}

json make_job_request(JobRequest type, const std::string& inbox, const std::string& identity,
                      double time, const std::vector<std::string>& jobs) {
  return {{"type", to_string(type)},
          {"inbox", inbox},
          {"identity", identity},
          {"time", time},
          {"jobs", jobs}};
}

json make_report(const std::string& node, const std::string& job, std::int64_t offset,
                 std::int64_t next, const json& report) {
  return {{"type", "report"}, {"node", node}, {"job", job},
          {"offset", offset}, {"next", next}, {"report", report}};
}

json make_node_seen(const std::string& node, bool up, const std::string& error, double time) {
  return {{"type", "node-seen"}, {"node", node}, {"up", up}, {"error", error}, {"time", time}};
}

json make_job_ended(const std::string& job, Lifecycle state, const std::string& reason,
                    std::optional<int> exit_status, double time,
                    const std::optional<LogTail>& log_tail) {
  json r = {{"type", "job-ended"},
            {"job", job},
            {"state", to_string(state)},
            {"reason", reason},
            {"exit_status", exit_status ? json(*exit_status) : json(nullptr)},
            {"time", time}};
  if (log_tail) r["log_tail"] = log_tail_to_json(*log_tail);
  return r;
}

json log_tail_to_json(const LogTail& t) {
  return {{"node", t.node}, {"rank", t.rank}, {"text", t.text}};
}

std::optional<LogTail> log_tail_from_json(const json& j) {
  if (!j.is_object() || !j.contains("rank") || !j["rank"].is_number_integer()) {
    return std::nullopt;
  }
  const std::int64_t rank = int_of(j, "rank", -1);
  if (rank < 0 || rank > std::numeric_limits<int>::max()) return std::nullopt;
  LogTail t;
  t.node = str_of(j, "node");
  t.rank = static_cast<int>(rank);
  t.text = str_of(j, "text");
  return t;
}

json make_round(std::int64_t round, double time, const json& cluster, const json& allocation,
                const json& placement, const json& models, const json& fairness,
                const json& deadlines, const std::set<std::string>& reserved) {
  json r = {{"type", "round"},    {"round", round},           {"time", time},
            {"cluster", cluster}, {"allocation", allocation}, {"placement", placement},
            {"models", models}};
  if (!fairness.is_null()) r["fairness"] = fairness;
  if (!deadlines.is_null()) r["deadlines"] = deadlines;
  if (!reserved.empty()) r["reserved"] = reserved;
  return r;
}

json make_job_silent(const std::string& job, double silent_for, double time) {
  return {{"type", "job-silent"}, {"job", job}, {"silent_for", silent_for}, {"time", time}};
}

json make_job_peer_lost(const std::string& job, const std::string& node, std::int64_t generation,
                        int attempt, double time) {
  return {{"type", "job-peer-lost"},  {"job", job},         {"node", node},
          {"generation", generation}, {"attempt", attempt}, {"time", time}};
}

json make_delivered(std::int64_t round, const std::string& node, bool ok, const std::string& error,
                    const json& plan) {
  json actions = json::array();
  if (plan.is_object() && plan.contains("actions") && plan["actions"].is_array()) {
    for (const auto& a : plan["actions"]) {
      if (!a.is_object()) continue;
      json entry = {{"job", str_of(a, "job")},
                    {"action", str_of(a, "action")},
                    {"generation", int_of(a, "round", 0)}};
      if (auto w = str_of(a, "warning"); !w.empty()) entry["warning"] = w;
      actions.push_back(std::move(entry));
    }
  }
  return {{"type", "delivered"},      {"round", round},    {"node", node}, {"ok", ok},
          {"error", ok ? "" : error}, {"actions", actions}};
}

}  // namespace sia::ctl
