#include "ctl/command_driver.hpp"

#include <algorithm>
#include <mutex>
#include <thread>

#include "core/document.hpp"
#include "core/error.hpp"
#include "ctl/node_outputs.hpp"
#include "ctl/pipe_process.hpp"
#include "ctl/stop_first.hpp"
#include "exec/job_status.hpp"
#include "os/atomic_file.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

constexpr std::size_t kParallel = 16;

// A node command's output is read up to this many bytes (see the header).
constexpr std::size_t kMaxOutput = kMaxNodeOutputMiB << 20;

PipedResult run_node_command(const std::vector<std::string>& argv, const std::string& input,
                             double timeout) {
  return run_piped(argv, input, timeout, {}, kMaxOutput);
}

bool failed(const PipedResult& r) {
  return r.status != 0 || r.timed_out || r.oversized;
}

std::string failure(const PipedResult& r) {
  std::string why = last_line(r.err);
  if (r.oversized) {
    return "printed more than " + std::to_string(kMaxNodeOutputMiB) +
           " MiB on standard output (the limit); stopped";
  }
  if (r.timed_out) return "timed out after " + std::to_string(static_cast<int>(r.seconds)) + " s";
  std::string status = "exit status " + std::to_string(r.status);
  return why.empty() ? status : why + " (" + status + ")";
}

}  // namespace

std::string expand_placeholders(const std::string& arg,
                                const std::map<std::string, std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < arg.size();) {
    if (arg[i] == '{') {
      auto close = arg.find('}', i);
      if (close != std::string::npos) {
        auto it = values.find(arg.substr(i + 1, close - i - 1));
        if (it != values.end()) {
          out += it->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += arg[i++];
  }
  return out;
}

CommandDriver::CommandDriver(Cluster cluster, std::string cluster_file, std::string state_dir,
                             NodeCommandSettings templates, std::function<ReportOffsets()> offsets)
    : cluster_(std::move(cluster)),
      cluster_file_(std::move(cluster_file)),
      state_dir_(std::move(state_dir)),
      templates_(std::move(templates)),
      offsets_(std::move(offsets)) {}

std::vector<std::string> CommandDriver::expand(const std::vector<std::string>& tmpl,
                                               const ClusterNode& node, std::int64_t round) const {
  const std::map<std::string, std::string> values = {
      {"state", state_dir_},
      {"node", node.name},
      {"address", node.address},
      {"cluster", cluster_file_},
      {"jobs", state_dir_ + "/run/jobs.json"},
      {"placement", state_dir_ + "/run/placement.json"},
      {"round", std::to_string(round)}};
  std::vector<std::string> out;
  for (const auto& a : tmpl) out.push_back(expand_placeholders(a, values));
  return out;
}

void CommandDriver::for_nodes(const std::vector<std::size_t>& nodes,
                              const std::function<void(std::size_t)>& fn) const {
  for (std::size_t begin = 0; begin < nodes.size(); begin += kParallel) {
    std::size_t end = std::min(nodes.size(), begin + kParallel);
    if (end - begin == 1) {
      fn(nodes[begin]);
      continue;
    }
    std::vector<std::thread> threads;
    for (std::size_t k = begin; k < end; ++k) threads.emplace_back(fn, nodes[k]);
    for (auto& t : threads) t.join();
  }
}

json CommandDriver::read_log(const std::string& node, const std::vector<std::string>& args) {
  auto n = std::find_if(cluster_.nodes.begin(), cluster_.nodes.end(),
                        [&](const ClusterNode& c) { return c.name == node; });
  if (n == cluster_.nodes.end()) {
    throw Error(ExitStatus::unavailable, "node " + node + " is not in cluster " + cluster_.name);
  }
  std::vector<std::string> argv = expand(templates_.logs, *n, 0);
  argv.insert(argv.end(), args.begin(), args.end());
  PipedResult r = run_node_command(argv, "", templates_.timeout);
  const bool refused = r.status == static_cast<int>(ExitStatus::usage) ||
                       r.status == static_cast<int>(ExitStatus::no_input);
  if (refused && !r.timed_out && !r.oversized && !last_line(r.err).empty()) {
    std::string why = last_line(r.err);
    if (auto colon = why.find(": error: "); colon != std::string::npos) why = why.substr(colon + 9);
    throw Error(static_cast<ExitStatus>(r.status), "node " + node + ": " + why);
  }
  if (failed(r)) {
    throw Error(ExitStatus::unavailable, "node " + node + ": cannot read the log: " + failure(r));
  }
  return node_document(r.out, "node " + node + ": logs", "RunLog");
}

std::vector<std::string> CommandDriver::take_warnings() {
  return std::exchange(warnings_, {});
}

std::vector<NodeStatus> CommandDriver::observe() {
  std::vector<NodeStatus> out(cluster_.nodes.size());
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) all.push_back(i);
  for_nodes(all, [&](std::size_t i) {
    const ClusterNode& n = cluster_.nodes[i];
    NodeStatus& s = out[i];
    s.node = n.name;
    try {
      PipedResult r = run_node_command(expand(templates_.status, n, 0), "", templates_.timeout);
      if (r.status == static_cast<int>(ExitStatus::no_input) && !r.timed_out && !r.oversized) {
        // `sia-run status` on a node never given work: no state directory yet, no jobs.
        s.status = {{"node", n.name}, {"jobs", json::array()}};
        s.ok = true;
        return;
      }
      if (failed(r)) {
        s.error = failure(r);
        return;
      }
      s.status = node_document(r.out, "node " + n.name + ": status", "RunStatus");
      s.ok = true;
    } catch (const std::exception& e) {  // a node's bad answer is that node's error
      s.error = e.what();
    }
  });
  up_.clear();
  running_on_.clear();
  for (const auto& s : out) {
    if (!s.ok) continue;
    up_.insert(s.node);
    if (!s.status.is_object() || !s.status.contains("jobs") || !s.status["jobs"].is_array()) {
      continue;
    }
    for (const auto& j : s.status["jobs"]) {
      if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
      if (exec::holds_gpus(j.value("state", ""))) {
        running_on_[j["name"].get<std::string>()].insert(s.node);
      }
    }
  }
  observed_ = true;
  return out;
}

std::vector<std::string> CommandDriver::nodes_up() {
  if (!observed_) observe();
  return {up_.begin(), up_.end()};
}

std::vector<ReportLine> CommandDriver::drain_reports() {
  if (!observed_) observe();
  const ReportOffsets offsets = offsets_ ? offsets_() : ReportOffsets{};
  std::vector<std::vector<ReportLine>> per(cluster_.nodes.size());
  std::vector<std::string> errors(cluster_.nodes.size());
  std::vector<std::size_t> nodes;
  for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
    if (up_.count(cluster_.nodes[i].name)) nodes.push_back(i);
  }
  for_nodes(nodes, [&](std::size_t i) {
    const ClusterNode& n = cluster_.nodes[i];
    std::vector<std::string> argv = expand(templates_.reports, n, 0);
    for (auto it = offsets.lower_bound({n.name, ""});
         it != offsets.end() && it->first.first == n.name; ++it) {
      argv.push_back("--after");
      argv.push_back(it->first.second + "=" + std::to_string(it->second));
    }
    try {
      PipedResult r = run_node_command(argv, "", templates_.timeout);
      if (failed(r)) {
        errors[i] = "node " + n.name + ": reports: " + failure(r);
        return;
      }
      per[i] = node_report_lines(n.name, r.out, &errors[i]);
    } catch (const std::exception& e) {  // a node's bad answer is that node's error
      errors[i] = "node " + n.name + ": reports: " + e.what();
    }
  });
  std::vector<ReportLine> out;
  for (std::size_t i = 0; i < per.size(); ++i) {
    out.insert(out.end(), per[i].begin(), per[i].end());
    if (!errors[i].empty()) warnings_.push_back(errors[i]);
  }
  return out;
}

std::vector<NodeResult> CommandDriver::deliver(std::int64_t round, const Placement& placement,
                                               const json& jobs_doc) {
  if (!observed_) observe();
  const json data = placement_to_json(placement, cluster_);
  // Jobs that stop everywhere before they start again (ctl/stop_first.hpp).
  std::map<std::string, std::set<std::string>> moving;    // job -> the nodes it runs on now
  std::map<std::string, std::set<std::string>> going_to;  // job -> its nodes in `placement`
  for (const auto& jp : placement.jobs) {
    auto where = running_on_.find(jp.job);
    if (where == running_on_.end()) continue;
    std::set<std::string> to;
    for (const auto& ng : jp.nodes) to.insert(ng.node);
    if (stop_first(where->second, jp)) {
      moving[jp.job] = where->second;
      going_to[jp.job] = to;
    }
  }
  // Cron mode runs jobs as whoever runs sia-run on the nodes: no run_as (core/run_as.hpp).
  json jobs_here = jobs_doc;
  if (jobs_here.contains("data") && jobs_here["data"].contains("jobs")) {
    for (auto& j : jobs_here["data"]["jobs"]) {
      if (j.is_object() && j.contains("state") && j["state"].is_object())
        j["state"].erase("run_as");
    }
  }
  os::write_file_atomic(state_dir_ + "/run/jobs.json", jobs_here.dump() + "\n");
  std::vector<NodeResult> out(cluster_.nodes.size());
  std::vector<std::size_t> nodes;
  for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
    out[i].node = cluster_.nodes[i].name;
    if (up_.count(cluster_.nodes[i].name)) {
      nodes.push_back(i);
    } else {
      out[i].error = "down: nothing delivered";
    }
  }
  // Delivers `jobs` of the placement (all but those named) to `to`; the results' actions
  // add up over the phases, and a node is acknowledged when every phase it got was.
  auto phase = [&](const std::set<std::string>& left_out, const std::vector<std::size_t>& to) {
    json part = data;
    json kept = json::array();
    for (const auto& j : data["jobs"]) {
      if (!left_out.count(j.value("name", ""))) kept.push_back(j);
    }
    part["jobs"] = std::move(kept);
    const std::string doc =
        dump_document("Placement", {{"generator", "sia-ctl"}, {"round", round}}, part, false) +
        "\n";
    os::write_file_atomic(state_dir_ + "/run/placement.json", doc);
    for_nodes(to, [&](std::size_t i) {
      const ClusterNode& n = cluster_.nodes[i];
      NodeResult& res = out[i];
      try {
        PipedResult r =
            run_node_command(expand(templates_.apply, n, round), doc, templates_.timeout);
        if (failed(r)) {
          res.error = failure(r);
          res.acknowledged = false;
          return;
        }
        json plan = node_document(r.out, "node " + n.name + ": apply", "RunPlan");
        if (res.plan.is_object() && res.plan.contains("actions") && plan.contains("actions")) {
          for (const auto& a : plan["actions"]) res.plan["actions"].push_back(a);
        } else {
          res.plan = std::move(plan);
        }
        res.acknowledged = res.error.empty();
      } catch (const std::exception& e) {  // a node's bad answer is that node's error
        res.error = e.what();
        res.acknowledged = false;
      }
    });
  };
  std::set<std::string> held;
  for (const auto& [job, from] : moving) held.insert(job);
  phase(held, nodes);
  if (moving.empty()) return out;
  // Phase 2: the moving jobs whose old nodes all stopped them (or are down) and whose new
  // nodes all took phase 1 (else some ranks would wait in vain for the others).
  std::set<std::string> not_ready;
  for (const auto& [job, from] : moving) {
    for (std::size_t i = 0; i < cluster_.nodes.size(); ++i) {
      const std::string& name = cluster_.nodes[i].name;
      const bool old_node = from.count(name) && up_.count(name);
      if ((old_node || going_to[job].count(name)) && !out[i].acknowledged) {
        not_ready.insert(job);
      }
    }
  }
  std::vector<std::size_t> second;
  for (std::size_t i : nodes) {
    bool gets = false;
    for (const auto& jp : placement.jobs) {
      if (!moving.count(jp.job) || not_ready.count(jp.job)) continue;
      for (const auto& ng : jp.nodes) gets = gets || ng.node == cluster_.nodes[i].name;
    }
    if (gets && out[i].acknowledged) second.push_back(i);
  }
  if (!second.empty()) phase(not_ready, second);
  return out;
}

}  // namespace sia::ctl
