#include "policy/successive_halving.hpp"

#include <algorithm>
#include <cstdio>

namespace sia {

SuccessiveHalving::SuccessiveHalving(AppScheduler scheduler, std::string metric, bool minimize,
                                     int phase, std::string label)
    : scheduler_(scheduler),
      metric_(std::move(metric)),
      minimize_(minimize),
      phase_(phase),
      label_(std::move(label)) {}

SuccessiveHalving bracket_halving(const AppSpec& app, int b, int phase) {
  const int brackets = app_brackets(app.scheduler);
  return SuccessiveHalving(bracket_scheduler(app.scheduler, b), app.metric, app.minimize, phase,
                           brackets > 1 ? "hyperband bracket " + std::to_string(b + 1) + " of " +
                                              std::to_string(brackets)
                                        : "successive halving");
}

bool SuccessiveHalving::reached(const TrialProgress& t) const {
  return scheduler_.kind == AppSchedulerKind::successive_halving && phase_ < scheduler_.rungs - 1 &&
         t.fraction >= budget() - 1e-9;
}

AppRef bracket_ref(const std::string& name, const AppScheduler& s, const std::vector<int>& bracket,
                   int b, int phase) {
  const AppScheduler own = bracket_scheduler(s, b);
  const bool halving = own.kind == AppSchedulerKind::successive_halving;
  const int brackets = app_brackets(s);
  const int trials = brackets > 1 ? static_cast<int>(std::count(bracket.begin(), bracket.end(), b))
                                  : static_cast<int>(bracket.size());
  return AppRef{name,
                std::max(1, trials),
                own.eta,
                halving ? own.rungs : 1,
                halving ? phase : 0,
                brackets > 1 ? b : 0,
                brackets};
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
    out.push_back({ranked[i]->name, label_ + ": phase " + std::to_string(phase_ + 1) + " of " +
                                        std::to_string(scheduler_.rungs) + ", " + metric_ + " " +
                                        value + " ranked " + std::to_string(i + 1) + " of " +
                                        std::to_string(n) + " (kept " + std::to_string(keep) +
                                        ")"});
  }
  ++phase_;
  return out;
}

}  // namespace sia
