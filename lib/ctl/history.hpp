// Accounting, as sacct gives it: one row per job the controller's book holds (ended jobs
// for controller.history_days after they ended, see config.hpp), in a JobHistory document
//   {"jobs": [{name, identity, user, state, submitted, started, ended, wait, run_time,
//   gpu_seconds: {TYPE: s}, gpu_hours, restarts, lost_steps, step, exit_status, reason}],
//   "now"}
// started: when it was first placed (null: never); ended: null while it is active; wait:
// from submission to its first placement (to now while it has never run; null for a job
// that ended without running); run_time and gpu_seconds: the time it held GPUs, per GPU
// type, from each round's placement until the next change (a finished job's last report
// ends it), to now for a running job; restarts: its starts after the first; lost_steps:
// the steps its restarts lost (resumed behind its last report). Times are seconds since
// the epoch. history_csv() writes the same rows as CSV (RFC 4180, times in UTC ISO 8601,
// one gpu_hours_TYPE column per GPU type that appears).
// Thread-safety: pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"

namespace sia::ctl {

nlohmann::json job_history(const JobBook& book, double now);
std::string history_csv(const nlohmann::json& doc);
// The history as a table for people.
std::string history_table(const nlohmann::json& doc);

}  // namespace sia::ctl
