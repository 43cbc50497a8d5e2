#include "exec/job_status.hpp"

#include <nlohmann/json.hpp>

namespace sia::exec {

using nlohmann::json;

namespace {
constexpr RunState kStates[] = {RunState::running,   RunState::stopping, RunState::finished,
                                RunState::preempted, RunState::failed,   RunState::killed};
}

const char* to_string(RunState s) {
  switch (s) {
    case RunState::running:
      return "running";
    case RunState::stopping:
      return "stopping";
    case RunState::finished:
      return "finished";
    case RunState::preempted:
      return "preempted";
    case RunState::failed:
      return "failed";
    case RunState::killed:
      return "killed";
  }
  return "failed";
}

std::optional<RunState> parse_run_state(std::string_view s) {
  for (RunState r : kStates) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}

bool is_final(RunState s) {
  return s != RunState::running && s != RunState::stopping;
}

bool holds_gpus(std::string_view state) {
  auto s = parse_run_state(state);
  return s && !is_final(*s);
}

std::optional<ProcessExit> JobStatus::exit() const {
  if (failed_rank) {
    for (const auto& r : ranks) {
      if (r.rank == *failed_rank && r.exit) return r.exit;
    }
  }
  std::vector<ProcessExit> own, all;
  for (const auto& r : ranks) {
    if (!r.exit) continue;
    all.push_back(*r.exit);
    if (!r.stopped && !r.exit->success()) own.push_back(*r.exit);
  }
  return own.empty() ? combine_exits(all) : combine_exits(own);
}

std::vector<pid_t> JobStatus::live_pids() const {
  std::vector<pid_t> out;
  for (const auto& r : ranks) {
    if (!r.exit && r.pid > 0) out.push_back(r.pid);
  }
  return out;
}

std::optional<int> JobStatus::failing_rank() const {
  if (failed_rank) return failed_rank;
  std::optional<int> out;
  for (const auto& r : ranks) {
    if (r.exit && !r.stopped && !r.exit->success() && (!out || r.rank < *out)) out = r.rank;
  }
  return out;
}

static json exit_to_json(const ProcessExit& e) {
  return e.signal ? json{{"signal", e.signal}} : json{{"code", e.code}};
}

json job_status_to_json(const JobStatus& s) {
  json ranks = json::array();
  for (const auto& r : s.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"exit", r.exit ? exit_to_json(*r.exit) : json(nullptr)},
                     {"stopped", r.stopped}});
  }
  json out = {
      {"job", s.job},
      {"generation", s.generation},
      {"state", to_string(s.state)},
      {"reason", s.reason},
      {"supervisor",
       {{"pid", s.supervisor.pid}, {"start", s.supervisor.start}, {"boot", s.supervisor.boot}}},
      {"group", s.group},
      {"ranks", std::move(ranks)}};
  if (s.failed_rank) out["failed_rank"] = *s.failed_rank;
  return out;
}

JobStatus parse_job_status(const Node& d) {
  JobStatus s;
  s.job = d.at("job").as_string();
  s.generation = d.at("generation").positive_int32();
  Node state = d.at("state");
  auto st = parse_run_state(state.as_string());
  if (!st) state.expected("a job state (running, stopping, finished, preempted, failed, killed)");
  s.state = *st;
  s.reason = d.string_or("reason", "");
  if (auto sup = d.get("supervisor")) {
    s.supervisor.pid = static_cast<pid_t>(sup->int_or("pid", 0));
    s.supervisor.start = static_cast<std::uint64_t>(sup->int_or("start", 0));
    s.supervisor.boot = sup->string_or("boot", "");
  }
  s.group = static_cast<pid_t>(d.int_or("group", 0));
  if (auto f = d.get("failed_rank")) s.failed_rank = f->non_negative_int32();
  if (auto ranks = d.get("ranks")) {
    ranks->each([&](const Node& r) {
      RankStatus rs;
      rs.rank = r.at("rank").non_negative_int32();
      rs.pid = static_cast<pid_t>(r.int_or("pid", -1));
      if (auto e = r.get("exit")) {
        rs.exit = e->has("signal") ? ProcessExit::killed(e->at("signal").int32())
                                   : ProcessExit::exited(e->at("code").int32());
      }
      rs.stopped = r.bool_or("stopped", false);
      s.ranks.push_back(rs);
    });
  }
  return s;
}

}  // namespace sia::exec
