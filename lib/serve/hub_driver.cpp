#include "serve/hub_driver.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "core/document.hpp"
#include "ctl/stop_first.hpp"
#include "exec/job_status.hpp"
#include "os/clock.hpp"

namespace sia::serve {

using nlohmann::json;

namespace {

bool touches(const json& job, const std::string& node) {
  if (!job.is_object() || !job.contains("nodes") || !job["nodes"].is_array()) return false;
  for (const auto& n : job["nodes"]) {
    if (n.is_object() && n.value("name", "") == node) return true;
  }
  return false;
}

// RunStatus data with the job states of a HEARTBEAT laid over it: a job the heartbeat
// says ended is ended, whatever the older status said.
json merged_status(const json& run_status, const json& heartbeat_jobs) {
  json st = run_status.is_object() ? run_status : json::object();
  if (!st.contains("jobs") || !st["jobs"].is_array()) st["jobs"] = json::array();
  if (!heartbeat_jobs.is_object()) return st;
  std::set<std::string> seen;
  for (auto& j : st["jobs"]) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
    const std::string name = j["name"];
    seen.insert(name);
    auto h = heartbeat_jobs.find(name);
    if (h == heartbeat_jobs.end() || !h->is_string()) continue;
    const std::string state = *h;
    const auto parsed = exec::parse_run_state(state);
    if ((parsed == exec::RunState::finished || parsed == exec::RunState::failed) &&
        j.value("state", "") != state) {
      j["state"] = state;
    }
  }
  for (const auto& [name, state] : heartbeat_jobs.items()) {
    if (seen.count(name) || !state.is_string()) continue;
    st["jobs"].push_back({{"name", name}, {"state", state}});
  }
  return st;
}

}  // namespace

json placement_for_node(const json& placement_data, const std::string& node, std::int64_t round) {
  json data = placement_data;
  json jobs = json::array();
  for (const auto& j : placement_data.value("jobs", json::array())) {
    if (touches(j, node)) jobs.push_back(j);
  }
  data["jobs"] = jobs;
  // Evicted and waiting jobs are the cluster's business, not the node's.
  data["evicted"] = json::array();
  data["waiting"] = json::array();
  return {{"apiVersion", kApiVersion},
          {"kind", "Placement"},
          {"metadata", {{"generator", "sia-ctl serve"}, {"round", round}, {"node", node}}},
          {"data", data}};
}

json jobs_for_placement(const json& jobs_doc, const json& placement_data) {
  std::set<std::string> names;
  for (const auto& j : placement_data.value("jobs", json::array())) {
    if (j.is_object() && j.contains("name") && j["name"].is_string()) names.insert(j["name"]);
  }
  json doc = jobs_doc;
  json kept = json::array();
  if (jobs_doc.contains("data") && jobs_doc["data"].contains("jobs")) {
    for (const auto& s : jobs_doc["data"]["jobs"]) {
      if (s.is_object() && names.count(s.value("name", ""))) kept.push_back(s);
    }
  }
  doc["data"]["jobs"] = kept;
  return doc;
}

HubDriver::HubDriver(channel::Hub& hub, Cluster cluster, HubDriverOptions options)
    : hub_(hub),
      cluster_(std::move(cluster)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : os::system_clock()) {
  start_ = clock_.now();
  sent_ = std::move(options_.given);
  options_.given.clear();
}

void HubDriver::pump(std::chrono::milliseconds timeout) {
  handle(hub_.poll(timeout));
}

void HubDriver::handle(std::vector<channel::HubEvent> events) {
  std::vector<ctl::ReportLine> lines;
  for (auto& e : events) {
    switch (e.type) {
      case channel::HubEventType::reports:
        for (auto& l : e.lines) {
          ctl::ReportLine r;
          r.node = e.node;
          r.job = std::move(l.job);
          r.offset = l.offset;
          r.line = std::move(l.line);
          lines.push_back(std::move(r));
        }
        break;
      case channel::HubEventType::ack: {
        if (auto u = unsettled_.find(e.node);
            u != unsettled_.end() && u->second.latest == std::make_pair(e.ack.round, e.ack.seq)) {
          unsettled_.erase(u);
        }
        auto it = awaited_.find(e.node);
        if (it != awaited_.end() && it->second.first == e.ack.round &&
            it->second.second == e.ack.seq) {
          acks_[e.node] = e.ack;
          awaited_.erase(it);
        } else if (options_.on_late_ack) {
          options_.on_late_ack(e.node, e.ack);
        }
        break;
      }
      default:
        if (e.type == channel::HubEventType::ready) {
          seen_.insert(e.node);
          if (options_.leases) options_.leases->remember(e.node, e.ready.lease);
        }
        if (e.type == channel::HubEventType::fenced) unsettled_.erase(e.node);
        if (options_.on_event) options_.on_event(e);
        break;
    }
  }
  if (lines.empty()) return;
  if (options_.on_reports) {
    options_.on_reports(std::move(lines));
  } else {
    buffered_.insert(buffered_.end(), std::make_move_iterator(lines.begin()),
                     std::make_move_iterator(lines.end()));
  }
}

bool HubDriver::held(const std::string& node) {
  auto it = options_.hold.find(node);
  if (it == options_.hold.end() || seen_.count(node)) return false;
  if (clock_.now() < start_ + os::span(it->second)) return true;
  if (options_.log) {
    options_.log(node + " did not come back within " + os::fmt_seconds(it->second) +
                 " of the controller's start: it is fenced, its jobs count as stopped");
  }
  options_.hold.erase(it);
  return false;
}

json HubDriver::own_status(const channel::AgentView& a) const {
  json st = merged_status(a.run_status, a.jobs);
  if (!assigned_.count(a.node)) return st;  // nothing sent since the start: its word stands
  auto sent = sent_.find(a.node);
  json kept = json::array();
  for (const auto& j : st["jobs"]) {
    if (j.is_object() && sent != sent_.end() && sent->second.count(j.value("name", ""))) {
      kept.push_back(j);
    }
  }
  st["jobs"] = kept;
  return st;
}

std::vector<std::string> HubDriver::nodes_up() {
  std::vector<std::string> out;
  for (const auto& n : cluster_.nodes) {
    auto a = hub_.agent(n.name);
    // Silent but not fenced: it still holds its jobs (they must not start elsewhere).
    if ((a && !a->fenced) || held(n.name)) out.push_back(n.name);
  }
  return out;
}

std::vector<ctl::NodeStatus> HubDriver::observe() {
  std::vector<ctl::NodeStatus> out;
  for (const auto& n : cluster_.nodes) {
    ctl::NodeStatus s;
    s.node = n.name;
    auto a = hub_.agent(n.name);
    if (held(n.name)) {
      s.error =
          "its agent has not come back since the controller started; its jobs count "
          "as running there until it is fenced";
    } else if (!a || (a->fenced && !seen_.count(n.name))) {
      s.error = "no agent has said READY for this node";
    } else if (a->fenced) {
      s.error = "fenced: its agent has been silent for " + os::fmt_seconds(a->silent_for);
    } else if (!a->up) {
      s.error = "its agent has been silent for " + os::fmt_seconds(a->silent_for) +
                "; its jobs count as running until it is fenced";
    } else {
      s.ok = true;
    }
    if (a && !a->fenced) s.status = own_status(*a);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ctl::ReportLine> HubDriver::drain_reports() {
  pump(std::chrono::milliseconds(0));
  std::vector<ctl::ReportLine> out;
  out.swap(buffered_);
  return out;
}

void HubDriver::send_and_wait(std::int64_t round, const std::map<std::string, json>& parts,
                              const json& jobs_doc, os::Clock::TimePoint deadline,
                              std::map<std::string, ctl::NodeResult>& results) {
  awaited_.clear();
  acks_.clear();
  for (const auto& [node, part] : parts) {
    ctl::NodeResult& r = results[node];
    auto a = hub_.agent(node);
    auto seq = hub_.assign(node, round, part, jobs_for_placement(jobs_doc, part["data"]));
    if (!seq || !a) {
      r.error = "the hub would not take its ASSIGN";
    } else if (!a->connected || !a->up) {
      r.error = "its agent is silent: the ASSIGN waits for it";
    } else {
      awaited_[node] = {round, *seq};
    }
    std::set<std::string>& sent = sent_[node];
    assigned_.insert(node);
    for (const auto& j : part["data"]["jobs"]) sent.insert(j.value("name", ""));
    if (seq) {
      Unsettled& u = unsettled_[node];
      u.latest = {round, *seq};
      for (const auto& j : part["data"]["jobs"]) u.jobs.insert(j.value("name", ""));
    }
  }
  while (!awaited_.empty() && clock_.now() < deadline) {
    if (options_.interrupted && options_.interrupted()) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
    pump(std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(100)));
    // A node that went down or was fenced meanwhile will not answer this round.
    for (auto it = awaited_.begin(); it != awaited_.end();) {
      auto a = hub_.agent(it->first);
      if (!a || a->fenced || !a->connected || !a->up) {
        results[it->first].error = "its agent went away before it acknowledged";
        it = awaited_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [node, ack] : acks_) {
    ctl::NodeResult& r = results[node];
    json actions = r.plan.is_object() ? r.plan.value("actions", json::array()) : json::array();
    if (ack.plan.is_object()) {
      for (const auto& x : ack.plan.value("actions", json::array())) actions.push_back(x);
    }
    r.acknowledged = ack.ok;
    r.plan = ack.plan.is_object() ? ack.plan : json::object();
    r.plan["actions"] = actions;
    r.status = ack.run_status;
    r.error = ack.ok ? "" : (ack.error.empty() ? "apply failed" : ack.error);
  }
  for (const auto& [node, rs] : awaited_) {
    results[node].acknowledged = false;
    results[node].error = "no ACK within " + os::fmt_seconds(options_.ack_timeout) + " (round " +
                          std::to_string(rs.first) + ", seq " + std::to_string(rs.second) +
                          "; the hub resends it)";
  }
  awaited_.clear();
  acks_.clear();
}

std::vector<ctl::NodeResult> HubDriver::deliver(std::int64_t round, const Placement& placement,
                                                const json& jobs_doc) {
  const auto start = clock_.now();
  const auto deadline = start + os::span(options_.ack_timeout);
  const json data = placement_to_json(placement, cluster_);
  std::map<std::string, ctl::NodeResult> results;
  // Where each job runs now, by the agents' word.
  std::map<std::string, std::set<std::string>> running_on;
  for (const auto& v : hub_.agents()) {
    if (v.fenced) continue;
    json st = own_status(v);
    for (const auto& j : st["jobs"]) {
      if (exec::holds_gpus(j.value("state", ""))) running_on[j.value("name", "")].insert(v.node);
    }
    if (auto u = unsettled_.find(v.node); u != unsettled_.end()) {
      for (const auto& job : u->second.jobs) running_on[job].insert(v.node);
    }
  }
  // The jobs that must stop everywhere before they start again (ctl/stop_first.hpp).
  std::set<std::string> staged;
  for (const auto& jp : placement.jobs) {
    if (ctl::stop_first(running_on[jp.job], jp)) staged.insert(jp.job);
  }
  std::map<std::string, json> full, first;
  std::map<std::string, std::set<std::string>> held_back;
  for (const auto& n : cluster_.nodes) {
    results[n.name].node = n.name;
    auto a = hub_.agent(n.name);
    if (!a || a->fenced) {
      results[n.name].error = held(n.name) ? "its agent has not come back: nothing delivered"
                              : a          ? "fenced: nothing delivered"
                                           : "no agent: nothing delivered";
      continue;
    }
    json part = placement_for_node(data, n.name, round);
    full[n.name] = part;
    // Phase 1: every job but the staged ones (which stop where they run).
    json kept = json::array();
    for (const auto& j : part["data"]["jobs"]) {
      const std::string job = j.value("name", "");
      if (staged.count(job)) {
        held_back[n.name].insert(job);
      } else {
        kept.push_back(j);
      }
    }
    part["data"]["jobs"] = kept;
    first[n.name] = part;
  }
  send_and_wait(round, first, jobs_doc, deadline, results);
  // Phase 2: the staged jobs, once every node that ran them has acknowledged phase 1.
  std::map<std::string, json> second;
  for (const auto& [node, jobs] : held_back) {
    json part = full[node];
    json kept = json::array();
    for (const auto& j : part["data"]["jobs"]) {
      const std::string job = j.value("name", "");
      bool ready = true;
      if (jobs.count(job)) {
        for (const auto& m : running_on[job]) {
          auto a = hub_.agent(m);
          ready = ready && (results[m].acknowledged || !a || a->fenced);
        }
      }
      if (ready) kept.push_back(j);
    }
    if (kept.size() == first[node]["data"]["jobs"].size()) continue;  // nothing may start
    part["data"]["jobs"] = kept;
    second[node] = part;
  }
  if (!second.empty()) send_and_wait(round, second, jobs_doc, deadline, results);
  std::vector<ctl::NodeResult> out;
  for (const auto& n : cluster_.nodes) out.push_back(std::move(results[n.name]));
  last_deliver_ = std::chrono::duration<double>(clock_.now() - start).count();
  return out;
}

std::map<std::string, double> restart_hold(const std::set<std::string>& nodes,
                                           const channel::HubOptions& ho) {
  std::map<std::string, double> out;
  for (const auto& n : nodes) {
    out[n] = channel::silence_limit(ho.heartbeat_interval, ho.heartbeat_liveness,
                                    channel::lease_before_ready(ho.remembered, n, ho.fence_after));
  }
  return out;
}

}  // namespace sia::serve
