#include "round/schedule_pass.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "place/placer.hpp"

namespace sia {

GoodputMatrix estimate_round(Estimator& estimator, const Cluster& cluster,
                             const std::string& profile, const std::vector<JobState*>& jobs,
                             const std::map<std::string, AppRef>& apps,
                             std::map<std::string, std::string>* unschedulable,
                             const std::function<void(std::size_t, GoodputRow&)>& adjust) {
  GoodputMatrix m;
  m.cluster = cluster;
  m.profile = profile;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    JobState& job = *jobs[k];
    if (unschedulable) {
      try {
        m.jobs.push_back(estimator.estimate_job(job));
      } catch (const Error& e) {
        (*unschedulable)[job.spec.name] = e.what();
        continue;
      }
    } else {
      m.jobs.push_back(estimator.estimate_job(job));
    }
    if (adjust) adjust(k, m.jobs.back());
    m.order.push_back(job.spec.name);
  }
  std::sort(m.jobs.begin(), m.jobs.end(),
            [](const GoodputRow& a, const GoodputRow& b) { return a.job < b.job; });
  for (auto& row : m.jobs) {  // a trial bids with its app (Themis)
    if (auto it = apps.find(row.job); it != apps.end()) row.app = it->second;
  }
  return m;
}

Allocation solve_round(Policy& policy, const GoodputMatrix& matrix,
                       const std::optional<Allocation>& previous) {
  Allocation alloc = policy.allocate(matrix, previous);
  alloc.order = matrix.order;
  return alloc;
}

Placement place_round(const Allocation& allocation, const Cluster& cluster,
                      const std::optional<Placement>& previous, const PlacerQuirks& quirks) {
  return place(allocation, cluster, previous, quirks, &allocation.order);
}

}  // namespace sia
