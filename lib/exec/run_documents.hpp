// The documents sia-run prints: RunPlan (what apply, run --dry-run and stop do or would
// do, one action per job) and RunStatus (what runs on the node: every job's state, round,
// GPUs, pids, exit status and logs), as JSON envelopes or tables for people.
// Thread-safety: pure (printing writes stdout).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/tool.hpp"
#include "exec/reconcile.hpp"
#include "exec/state_dir.hpp"

namespace sia::exec {

nlohmann::json plan_to_json(const std::string& node, const StateDir& state, bool dry_run,
                            const std::vector<PlannedAction>& actions);
std::string plan_table(const std::vector<PlannedAction>& actions, bool dry_run);
void print_plan(const std::string& node, const StateDir& state, bool dry_run,
                const std::vector<PlannedAction>& actions, cli::Format format);

nlohmann::json status_to_json(const std::string& node, const StateDir& state,
                              const std::vector<JobRecord>& records);
std::string status_table(const StateDir& state, const std::vector<JobRecord>& records);
void print_status(const std::string& node, const StateDir& state,
                  const std::vector<JobRecord>& records, cli::Format format);

}  // namespace sia::exec
