#include "round/census.hpp"

#include <algorithm>

namespace sia {

Census take_census(const std::vector<CensusEntry>& jobs, int units) {
  Census c;
  c.unit_active.assign(static_cast<std::size_t>(std::max(0, units)), 0);
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const CensusEntry& e = jobs[k];
    const int i = static_cast<int>(k);
    if (e.ended) {
      ++c.ended;
      if (e.ended_now) c.finished_now.push_back(i);
      continue;
    }
    if (!e.arrived) continue;
    if (e.unit >= 0 && e.unit < units) c.unit_active[e.unit] = 1;
    if (!e.waiting) c.active.push_back(i);
  }
  c.active_units =
      static_cast<int>(std::count(c.unit_active.begin(), c.unit_active.end(), char{1}));
  return c;
}

}  // namespace sia
