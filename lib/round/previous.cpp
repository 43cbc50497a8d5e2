#include "round/previous.hpp"

#include <utility>
#include <vector>

namespace sia {

std::optional<Allocation> previous_for(const std::optional<Allocation>& previous,
                                       const std::set<std::string>& scheduled) {
  if (!previous) return std::nullopt;
  Allocation kept = *previous;
  std::vector<JobAllocation> jobs;
  for (const auto& ja : previous->jobs) {
    if (scheduled.count(ja.job)) jobs.push_back(ja);
  }
  kept.jobs = std::move(jobs);
  return kept;
}

}  // namespace sia
