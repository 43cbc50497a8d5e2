#include "exec/run_documents.hpp"

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "exec/rank_log.hpp"

namespace sia::exec {

using nlohmann::json;

namespace {
const json kMeta = {{"generator", "sia-run"}};

json exit_json(const std::optional<ProcessExit>& e) {
  if (!e) return nullptr;
  return e->signal ? json{{"signal", e->signal}} : json{{"code", e->code}};
}

// A failed job's failing rank and the tail of its log ("" when it wrote none).
void add_failure_tail(json& job, const JobLaunch& l, const JobStatus& s) {
  if (s.state != RunState::failed) return;
  auto rank = s.failing_rank();
  if (!rank) return;
  std::string tail;
  for (const auto& rl : l.ranks) {
    if (rl.rank != *rank) continue;
    try {
      tail = read_log_tail(rl.log, kFailureTailLines, kFailureTailBytes).text;
    } catch (const Error&) {
      // no log: an empty tail
    }
  }
  job["failed_rank"] = *rank;
  job["log_tail"] = tail;
}
}  // namespace

json plan_to_json(const std::string& node, const StateDir& state, bool dry_run,
                  const std::vector<PlannedAction>& actions) {
  json list = json::array();
  for (const auto& a : actions) {
    json entry = {{"job", a.job},
                  {"action", to_string(a.action)},
                  {"reason", a.reason},
                  {"round", a.generation},
                  {"gpus", a.gpus}};
    if (!a.warning.empty()) entry["warning"] = a.warning;
    list.push_back(std::move(entry));
  }
  return {{"node", node}, {"state_dir", state.root()}, {"dry_run", dry_run}, {"actions", list}};
}

std::string plan_table(const std::vector<PlannedAction>& actions, bool dry_run) {
  cli::Table t({"job", "action", "round", "gpus", "reason"});
  for (const auto& a : actions) {
    t.add({a.job, to_string(a.action), std::to_string(a.generation), join_ints(a.gpus),
           a.warning.empty() ? a.reason : a.reason + "; WARNING: " + a.warning});
  }
  return t.render() + (dry_run ? "dry run: nothing was done\n" : "");
}

void print_plan(const std::string& node, const StateDir& state, bool dry_run,
                const std::vector<PlannedAction>& actions, cli::Format format) {
  if (format == cli::Format::table) {
    cli::write_stdout(plan_table(actions, dry_run));
  } else {
    cli::print_document("RunPlan", kMeta, plan_to_json(node, state, dry_run, actions));
  }
}

json status_to_json(const std::string& node, const StateDir& state,
                    const std::vector<JobRecord>& records) {
  json jobs = json::array();
  for (const auto& r : records) {
    if (!r.launch) continue;
    const JobLaunch& l = *r.launch;
    const JobStatus& s = r.status;
    json ranks = json::array();
    json pids = json::array();
    for (const auto& rl : l.ranks) {
      const RankStatus* rs = nullptr;
      for (const auto& x : s.ranks) {
        if (x.rank == rl.rank) rs = &x;
      }
      pid_t pid = rs ? rs->pid : -1;
      if (pid > 0 && !rs->exit && !is_final(s.state)) pids.push_back(pid);
      ranks.push_back({{"rank", rl.rank},
                       {"local_rank", rl.local_rank},
                       {"gpus", rl.gpus},
                       {"pid", pid > 0 ? json(pid) : json(nullptr)},
                       {"exit", exit_json(rs ? rs->exit : std::nullopt)},
                       {"log", rl.log}});
    }
    auto e = s.exit();
    bool ended = is_final(s.state);
    jobs.push_back(
        {{"name", r.job},
         {"state", to_string(s.state)},
         {"reason", s.reason},
         {"held", r.held},
         {"round", l.generation},
         {"gpu_type", l.gpu_type},
         {"gpus", l.local_gpus()},
         {"world_size", l.world_size()},
         {"master", l.master_addr + ":" + std::to_string(l.master_port)},
         {"pids", pids},
         {"supervisor", !ended && s.supervisor.pid > 0 ? json(s.supervisor.pid) : json(nullptr)},
         {"exit_status", ended && e ? json(e->status()) : json(nullptr)},
         {"ranks", ranks},
         {"logs", state.job_dir(r.job) + "/logs"},
         {"supervisor_log", state.supervisor_log(r.job)},
         {"report", l.report},
         {"ckpt_dir", l.ckpt_dir},
         {"restore", l.restore           ? "restored"
                     : l.restore_missing ? "missing"
                                         : "fresh"},
         {"batch_plan", l.plan}});
    put_batch_setting(jobs.back(), l.batch);
    add_failure_tail(jobs.back(), l, s);
  }
  return {{"node", node.empty() ? json(nullptr) : json(node)},
          {"state_dir", state.root()},
          {"jobs", jobs}};
}

std::string status_table(const StateDir& state, const std::vector<JobRecord>& records) {
  cli::Table t({"job", "state", "round", "gpus", "pids", "exit", "logs", "reason"});
  for (const auto& r : records) {
    if (!r.launch) continue;
    const bool ended = is_final(r.status.state);
    std::vector<int> pids;
    if (!ended) {
      for (pid_t p : r.status.live_pids()) pids.push_back(p);
    }
    auto e = r.status.exit();
    t.add({r.job, to_string(r.status.state), std::to_string(r.launch->generation),
           join_ints(r.launch->local_gpus()), pids.empty() ? "-" : join_ints(pids),
           ended && e ? std::to_string(e->status()) : "-", state.job_dir(r.job) + "/logs/",
           std::string(r.held ? "held; " : "") +
               (r.launch->restore_missing ? "no checkpoint to restore; " : "") + r.status.reason});
  }
  return t.render();
}

void print_status(const std::string& node, const StateDir& state,
                  const std::vector<JobRecord>& records, cli::Format format) {
  if (format == cli::Format::table) {
    cli::write_stdout(status_table(state, records));
  } else {
    cli::print_document("RunStatus", kMeta, status_to_json(node, state, records));
  }
}

}  // namespace sia::exec
