#include "exec/reconcile.hpp"

#include <algorithm>

namespace sia::exec {

const char* to_string(Action a) {
  switch (a) {
    case Action::start:
      return "start";
    case Action::restart:
      return "restart";
    case Action::resize:
      return "resize";
    case Action::stop:
      return "stop";
    case Action::keep:
      return "keep";
    case Action::leave:
      return "leave";
  }
  return "keep";
}

static std::string ended_how(const JobStatus& s) {
  std::string out = to_string(s.state);
  if (auto e = s.exit(); e && !e->success()) out += " (" + e->describe() + ")";
  return out;
}

// A trial of an app whose workers stopped at its phase's budget: given SIA_STOP_FRACTION,
// they exited 75 on their own (no stop request; sia-worker(7)), and the budget wanted is
// the same. Until the budget changes, starting it again would only stop it again at once.
static bool stopped_at_rung(const JobRecord& rec, const JobLaunch& want) {
  if (rec.status.state != RunState::preempted || want.stop_fraction <= 0 ||
      rec.launch->stop_fraction != want.stop_fraction || rec.status.ranks.empty()) {
    return false;
  }
  return std::all_of(rec.status.ranks.begin(), rec.status.ranks.end(), [](const RankStatus& r) {
    return !r.stopped && r.exit && r.exit->signal == 0 && r.exit->code == kPreemptedExit;
  });
}

static PlannedAction decide(const JobLaunch& want, const JobRecord* rec, Mode mode,
                            int round_floor) {
  const auto next = [&](int current) { return std::max(current + 1, round_floor); };
  PlannedAction a;
  a.job = want.job;
  a.gpus = want.local_gpus();
  if (!rec || !rec->launch) {
    a.action = Action::start;
    a.generation = next(0);
    a.reason = "new on this node";
    return a;
  }
  const int current = rec->launch->generation;
  const std::string restart = launch_change(*rec->launch, want);
  const std::string batch = batch_change(*rec->launch, want);
  std::string change = restart;  // everything that differs, for the reasons below
  if (change.empty()) {
    change = batch;
  } else if (!batch.empty() && change.find(batch) == std::string::npos) {
    change += "; " + batch;
  }
  if (rec->live()) {
    if (restart.empty()) {
      a.action = batch.empty() ? Action::keep : Action::resize;
      a.generation = current;
      a.reason = batch.empty() ? "unchanged" : batch;
    } else {
      a.action = Action::restart;
      a.generation = next(current);
      a.reason = change;
    }
    return a;
  }
  a.action = Action::start;
  a.generation = next(current);
  if (rec->status.state == RunState::finished) {
    // Finished is final, whatever the placement says now (it may have been decided
    // before the controller heard of the end).
    a.action = Action::leave;
    a.generation = current;
    a.reason = change.empty() ? "finished" : "finished (not started again: " + change + ")";
    return a;
  }
  if (mode == Mode::apply && stopped_at_rung(*rec, want)) {  // wherever it is placed
    a.action = Action::leave;
    a.generation = current;
    a.reason = "stopped at its rung (SIA_STOP_FRACTION " + number_text(want.stop_fraction) +
               "); starts again when its budget changes";
    return a;
  }
  if (!change.empty()) {
    a.reason = ended_how(rec->status) + ", placement changed: " + change;
    return a;
  }
  const RunState st = rec->status.state;
  if (st == RunState::finished) {
    a.action = Action::leave;
    a.generation = current;
    a.reason = "finished";
  } else if (rec->held && mode == Mode::apply) {
    a.action = Action::leave;
    a.generation = current;
    a.reason = "stopped by sia-run stop; starts again when its placement changes";
  } else if (st == RunState::failed && mode == Mode::apply) {
    a.action = Action::leave;
    a.generation = current;
    a.reason = ended_how(rec->status) + "; starts again when its placement changes";
  } else {
    a.reason = (rec->held ? "stopped by sia-run stop" : ended_how(rec->status)) +
               (st == RunState::failed || rec->held ? ", run again" : ", resume");
  }
  return a;
}

std::vector<PlannedAction> reconcile(const std::vector<JobLaunch>& wanted,
                                     const std::vector<JobRecord>& records,
                                     const std::set<std::string>& placed_elsewhere, Mode mode,
                                     int round_floor) {
  std::map<std::string, const JobRecord*> by_job;
  for (const auto& r : records) by_job[r.job] = &r;
  std::vector<PlannedAction> out;
  std::set<std::string> placed;
  for (const auto& w : wanted) {
    placed.insert(w.job);
    auto it = by_job.find(w.job);
    out.push_back(decide(w, it == by_job.end() ? nullptr : it->second, mode, round_floor));
  }
  for (const auto& r : records) {
    if (placed.count(r.job) || !r.live()) continue;
    PlannedAction a;
    a.job = r.job;
    a.action = Action::stop;
    a.generation = r.launch->generation;
    a.gpus = r.launch->local_gpus();
    a.reason = placed_elsewhere.count(r.job) ? "moved off this node" : "no longer placed";
    out.push_back(std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  return out;
}

}  // namespace sia::exec
