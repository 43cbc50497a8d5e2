// sia-run apply, stop and status (commands.hpp).
#include <algorithm>

#include "app/sia-run/commands.hpp"
#include "core/error.hpp"
#include "exec/node_apply.hpp"
#include "exec/run_documents.hpp"

namespace sia::exec {

static StateDir open_state(const CommonArgs& a) {
  return StateDir(a.state_dir.empty() ? default_state_dir() : a.state_dir);
}

static std::string node_of(const StateDir& state) {
  return state.bound_node();
}

int run_apply(const ApplyArgs& args) {
  NodeWork work = read_node_work(args);
  StateDir state = open_state(args);
  if (args.dry_run) {
    print_plan(work.node, state, true, plan_node_actions(work, state, Mode::apply), args.format);
    return 0;
  }
  StateLock lock = state.lock();
  os::Clock& clock = os::system_clock();
  Executor executor(state, clock);
  auto actions = apply_node(work, state, executor, Mode::apply, true);
  print_plan(work.node, state, false, actions, args.format);
  return 0;
}

int run_stop(const StopArgs& args) {
  StateDir state = open_state(args);
  std::vector<PlannedAction> actions;
  for (const auto& job : args.jobs) {
    JobRecord r = state.exists() && valid_job_name(job) ? state.record(job) : JobRecord{};
    if (!r.launch) {
      throw Error(ExitStatus::no_input,
                  "job \"" + job + "\" is not known in state directory " + state.root());
    }
    PlannedAction a;
    a.job = job;
    a.generation = r.launch->generation;
    a.gpus = r.launch->local_gpus();
    a.action = r.live() ? Action::stop : Action::leave;
    a.reason =
        r.live() ? "stopped by sia-run stop" : std::string("already ") + to_string(r.status.state);
    if (std::none_of(actions.begin(), actions.end(), [&](const auto& x) { return x.job == job; })) {
      actions.push_back(std::move(a));
    }
  }
  std::sort(actions.begin(), actions.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  std::string node = node_of(state);
  if (args.dry_run) {
    print_plan(node, state, true, actions, args.format);
    return 0;
  }
  StateLock lock = state.lock();
  os::Clock& clock = os::system_clock();
  Executor executor(state, clock);
  std::vector<std::pair<std::string, std::string>> stops;
  for (const auto& a : actions) {
    state.set_held(a.job, true);
    if (a.action == Action::stop) stops.emplace_back(a.job, a.reason);
  }
  executor.stop(stops, args.grace);
  print_plan(node, state, false, actions, args.format);
  return 0;
}

int run_status(const StatusArgs& args) {
  StateDir state = open_state(args);
  std::vector<JobRecord> records;
  if (state.exists()) {
    if (args.jobs.empty()) {
      records = state.records();
    } else {
      for (const auto& job : args.jobs) {
        JobRecord r = valid_job_name(job) ? state.record(job) : JobRecord{};
        if (!r.launch) {
          throw Error(ExitStatus::no_input,
                      "job \"" + job + "\" is not known in state directory " + state.root());
        }
        records.push_back(std::move(r));
      }
    }
  } else {
    // A typo'd --state-dir must not read as a node that runs nothing.
    throw Error(ExitStatus::no_input,
                state.root() + ": no such state directory (sia-run apply or run creates it)");
  }
  print_status(node_of(state), state, records, args.format);
  return 0;
}

}  // namespace sia::exec
