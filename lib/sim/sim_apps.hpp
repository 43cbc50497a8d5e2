// The simulator's apps (Themis' unit of fairness): each named app's trials with its app
// scheduler (one SuccessiveHalving per hyperband bracket), and a job without an app alone,
// an app of one. A trial trains no further than its phase's budget; each round the apps
// take their phase step (round/app_phase.hpp).
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "core/app_spec.hpp"
#include "core/job_spec.hpp"
#include "policy/successive_halving.hpp"
#include "round/contention.hpp"

namespace sia {

struct SimApp {
  std::string name;
  AppSpec spec;              // its scheduler, metric and direction (none for an app of one)
  std::vector<int> trials;   // workload indices
  std::vector<int> bracket;  // each trial's (as trials; hyperband)
  std::vector<SuccessiveHalving> brackets;  // one unless hyperband
  Contention contention;                    // over the rounds it was active
};

// The workload's apps in order of first trial; app_of[i]: job i's app. `specs`: the app
// schedulers (a job naming an app not listed is a trial of an app without one).
std::vector<SimApp> group_apps(const std::vector<JobSpec>& workload,
                               const std::vector<AppSpec>& specs, std::vector<int>& app_of);

// Job `job` (a trial of `app`) as the policies see its app: its bracket at its phase.
AppRef trial_ref(const SimApp& app, int job);

}  // namespace sia
