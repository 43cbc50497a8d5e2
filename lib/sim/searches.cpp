#include "sim/searches.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash64.hpp"

namespace sia {

std::vector<AppSpec> add_searches(std::vector<JobSpec>& jobs, const SearchOptions& o) {
  if (!(o.share >= 0 && o.share <= 1)) {
    throw Error(ExitStatus::usage, "--searches: expected a share of the jobs from 0 to 1");
  }
  std::vector<AppSpec> apps;
  const std::size_t target = static_cast<std::size_t>(std::llround(o.share * jobs.size()));
  const int span = std::max(0, o.max_trials - o.min_trials);
  std::size_t grouped = 0;
  for (std::size_t i = 0; i < jobs.size() && grouped < target;) {
    // A search starts here with probability `share`; its size is uniform in the range,
    // cut to what the share and the trace have left.
    if (unit_interval(hash64(o.seed, i, 0)) >= o.share) {
      ++i;
      continue;
    }
    std::size_t n = o.min_trials + hash64(o.seed, i, 1) % static_cast<std::uint64_t>(span + 1);
    n = std::min({n, target - grouped, jobs.size() - i});
    if (n < 2) break;
    const JobSpec lead = jobs[i];
    AppSpec app;
    app.name = "search-" + lead.name;
    if (app.name.size() > kMaxJobName) app.name.resize(kMaxJobName);
    app.submit_time = lead.submit_time;
    app.scheduler = o.scheduler;
    for (std::size_t k = i; k < i + n; ++k) {
      JobSpec t = lead;
      t.name = jobs[k].name;
      t.app = app.name;
      t.hparams = {{"lr", std::exp(std::log(1e-4) + unit_interval(hash64(o.seed, k, 2)) *
                                                        (std::log(1e-1) - std::log(1e-4)))}};
      t.quality = unit_interval(hash64(o.seed, k, 3));
      jobs[k] = std::move(t);
    }
    apps.push_back(std::move(app));
    grouped += n;
    i += n;
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit_time < b.submit_time;
  });
  return apps;
}

double simulated_loss(const JobSpec& trial, double fraction) {
  return trial.quality.value_or(0.0) + (1.0 - std::clamp(fraction, 0.0, 1.0));
}

}  // namespace sia
