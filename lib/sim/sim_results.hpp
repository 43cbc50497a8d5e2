// A simulation's results per job and per app, from its jobs at the end (the simulator's
// own; finish-time fairness is sim/fairness.hpp's, the summary metrics.cpp's).
// Thread-safety: plain functions.
#pragma once

#include <string>
#include <vector>

#include "sim/sim_apps.hpp"
#include "sim/sim_job.hpp"
#include "sim/simulator.hpp"

namespace sia {

// A completed job's result (its GPU seconds: those it held, per type).
JobResult job_result(const SimJob& job, const std::string& app, const std::string& stop_reason,
                     double queued);

// SimQuirks::whole_round_gpu_seconds: `allocated` (whole rounds of the GPUs allocated)
// shared over the types in proportion to the seconds held on each.
std::vector<double> whole_round_gpu_seconds(const SimJob& job, double allocated);

// Appends each app whose trials all completed (result_at[i]: job i's index in result.jobs,
// -1 past the horizon), in order of first trial.
void add_app_results(SimResult& result, const std::vector<SimApp>& apps,
                     const std::vector<JobSpec>& workload, const std::vector<int>& result_at);

}  // namespace sia
