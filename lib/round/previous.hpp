// A round's previous decisions as the next round's scheduling pass sees them: only the jobs
// that round schedules keep theirs (a job that ended, waits at its app's rung or is left
// out for any reason starts afresh when it is scheduled again). The simulator and the
// controller both hand the policy and the placer what these functions keep.
// Thread-safety: plain functions.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "core/allocation.hpp"

namespace sia {

// `previous` with only the scheduled jobs' allocations, in their order (none: none).
std::optional<Allocation> previous_for(const std::optional<Allocation>& previous,
                                       const std::set<std::string>& scheduled);

}  // namespace sia
