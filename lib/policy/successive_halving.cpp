#include "policy/successive_halving.hpp"

#include <algorithm>
#include <cstdio>

namespace sia {

SuccessiveHalving::SuccessiveHalving(AppScheduler scheduler, std::string metric, bool minimize,
                                     int phase)
    : scheduler_(scheduler), metric_(std::move(metric)), minimize_(minimize), phase_(phase) {}

bool SuccessiveHalving::reached(const TrialProgress& t) const {
  return scheduler_.kind == AppSchedulerKind::successive_halving && phase_ < scheduler_.rungs - 1 &&
         t.fraction >= budget() - 1e-9;
}

std::vector<HalvingStop> SuccessiveHalving::close_phase(
    const std::vector<TrialProgress>& survivors) {
  std::vector<HalvingStop> out;
  if (survivors.empty() || scheduler_.kind != AppSchedulerKind::successive_halving ||
      phase_ >= scheduler_.rungs - 1) {
    return out;
  }
  for (const auto& t : survivors) {
    if (!reached(t)) return out;
  }
  std::vector<const TrialProgress*> ranked;
  for (const auto& t : survivors) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const TrialProgress* a, const TrialProgress* b) {
                     if (a->metric.has_value() != b->metric.has_value())
                       return a->metric.has_value();
                     if (a->metric && *a->metric != *b->metric) {
                       return minimize_ ? *a->metric < *b->metric : *a->metric > *b->metric;
                     }
                     return a->name < b->name;
                   });
  const std::size_t n = ranked.size();
  const std::size_t eta = static_cast<std::size_t>(scheduler_.eta);
  const std::size_t keep = (n + eta - 1) / eta;
  for (std::size_t i = keep; i < n; ++i) {
    char value[32] = "no value";
    if (ranked[i]->metric) std::snprintf(value, sizeof value, "%.4g", *ranked[i]->metric);
    out.push_back({ranked[i]->name, "successive halving: phase " + std::to_string(phase_ + 1) +
                                        " of " + std::to_string(scheduler_.rungs) + ", " + metric_ +
                                        " " + value + " ranked " + std::to_string(i + 1) + " of " +
                                        std::to_string(n) + " (kept " + std::to_string(keep) +
                                        ")"});
  }
  ++phase_;
  return out;
}

}  // namespace sia
