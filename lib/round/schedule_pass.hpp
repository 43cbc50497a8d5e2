// The scheduling pass of a round, estimate -> solve -> place, on the jobs the round
// schedules: the simulator runs it on its jobs' scheduler views, the controller's Stages on
// its job book's (where a stage may also be an external program, ctl/stages.hpp). Each
// step is a function so that a caller can put its own stage, timing or documents between
// them; a round's previous decisions reach solve and place as round/previous.hpp keeps
// them. The rows, allocation and placement depend only on the arguments (policies run
// on their work limits when PolicyOptions::wall_clock is off).
// Thread-safety: not thread-safe on one Estimator or Policy; otherwise re-entrant.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/allocation.hpp"
#include "core/cluster.hpp"
#include "core/goodput_matrix.hpp"
#include "core/placement.hpp"
#include "model/estimator.hpp"
#include "model/job_state.hpp"
#include "place/placer_quirks.hpp"
#include "policy/policy.hpp"

namespace sia {

// The round's goodput matrix on `cluster` (profile: "default" or "reference"): a row per
// job of `jobs` (submission order) the estimator can estimate, rows sorted by job name,
// `order` the jobs' submission order; a trial's row bids with its app (`apps`: job -> its
// app). A job the estimator refuses has its message in `*unschedulable`, or, with null,
// the error propagates. `adjust`, when set, edits job k's row once estimated.
GoodputMatrix estimate_round(Estimator& estimator, const Cluster& cluster,
                             const std::string& profile, const std::vector<JobState*>& jobs,
                             const std::map<std::string, AppRef>& apps,
                             std::map<std::string, std::string>* unschedulable = nullptr,
                             const std::function<void(std::size_t, GoodputRow&)>& adjust = {});

// The policy's allocation of the matrix's jobs given the previous one, its jobs listed in
// the matrix's order (the artifact's placer breaks ties with it).
Allocation solve_round(Policy& policy, const GoodputMatrix& matrix,
                       const std::optional<Allocation>& previous);

// The allocation placed on `cluster` from the previous placement by the placer the quirks
// pick (place/placer.hpp; the artifact's takes the jobs in the allocation's order).
Placement place_round(const Allocation& allocation, const Cluster& cluster,
                      const std::optional<Placement>& previous, const PlacerQuirks& quirks = {});

}  // namespace sia
