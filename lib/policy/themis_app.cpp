#include "policy/themis_app.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/app_spec.hpp"

namespace sia {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double budget_delta(const ThemisPhases& a, std::size_t k) {
  return a.phase_budget[k] - (k == 0 ? 0.0 : a.phase_budget[k - 1]);
}

// The schedule from phase `from` on, with `m` trials at once at `t_iter` s per iteration.
double later_phases(const ThemisPhases& a, std::size_t from, int m, double t_iter) {
  double t = 0;
  for (std::size_t k = from; k < a.phase_jobs.size() && k < a.phase_budget.size(); ++k) {
    t += std::ceil(static_cast<double>(a.phase_jobs[k]) / m) * budget_delta(a, k) * t_iter;
  }
  return t;
}

// Every bracket: the app's own schedule, then the others.
template <typename F>
void each_bracket(const ThemisApp& a, F f) {
  f(static_cast<const ThemisPhases&>(a));
  for (const auto& b : a.more_brackets) f(b);
}

}  // namespace

ThemisApp themis_app_model(const std::vector<ThemisTrial>& trials, int* started) {
  ThemisApp app;
  std::map<int, std::pair<AppRef, ThemisPhases>> brackets;
  std::vector<double> totals;
  for (const ThemisTrial& t : trials) {
    if (app.gpus_per_trial <= 1) app.gpus_per_trial = t.gpus;
    app.serial_iter.push_back(t.gpus / t.rate);
    auto& bracket = brackets.try_emplace(t.ref.bracket, t.ref, ThemisPhases{}).first->second;
    bracket.second.done.push_back(t.done);
    app.elapsed = std::max(app.elapsed, t.age);
    totals.push_back(t.total);
  }
  if (started) *started = 0;
  if (totals.empty()) return app;
  std::sort(totals.begin(), totals.end());
  const double total = totals[totals.size() / 2];
  for (auto& [k, bracket] : brackets) {
    const AppRef& ref = bracket.first;
    ThemisPhases& p = bracket.second;
    AppScheduler sched{
        ref.rungs > 1 ? AppSchedulerKind::successive_halving : AppSchedulerKind::none, ref.eta,
        ref.rungs};
    for (int j = 0, n = ref.trials; j < ref.rungs; ++j, n = (n + ref.eta - 1) / ref.eta) {
      p.phase_jobs.push_back(n);
      p.phase_budget.push_back(rung_fraction(sched, j) * total);
    }
    p.phase = ref.phase;
    if (started) *started += ref.trials;
    if (k == brackets.begin()->first) {
      static_cast<ThemisPhases&>(app) = std::move(p);
    } else {
      app.more_brackets.push_back(std::move(p));
    }
  }
  return app;
}

double themis_app_remaining(const ThemisApp& a, int gpus) {
  const int d = std::max(1, a.gpus_per_trial);
  if (gpus < d) return std::numeric_limits<double>::infinity();
  const int m = std::max(1, gpus / d);
  const double t_iter = median(a.serial_iter) / d;
  double sum = 0, longest = 0, later = 0;
  each_bracket(a, [&](const ThemisPhases& b) {
    const std::size_t k = static_cast<std::size_t>(std::max(0, b.phase));
    if (k < b.phase_budget.size()) {
      for (double done : b.done) {
        const double left = std::max(0.0, b.phase_budget[k] - done);
        sum += left;
        longest = std::max(longest, left);
      }
    }
    later += later_phases(b, k + 1, m, t_iter);
  });
  return std::max(sum / m, longest) * t_iter + later;
}

double themis_app_shared_time(const ThemisApp& a, int gpus) {
  return a.elapsed + themis_app_remaining(a, gpus);
}

double themis_app_ideal_time(const ThemisApp& a, double cluster_gpus, double n_avg,
                             int max_demand) {
  const int d = std::max(1, a.gpus_per_trial);
  const double share = std::min(cluster_gpus / std::max(1.0, n_avg), double(max_demand));
  const int m = std::max(1, static_cast<int>(std::floor(share / d + 1e-9)));
  double t = 0;
  each_bracket(
      a, [&](const ThemisPhases& b) { t += later_phases(b, 0, m, median(a.serial_iter) / d); });
  return t;
}

double themis_app_rho(const ThemisApp& a, int gpus, double cluster_gpus, double n_avg,
                      int max_demand) {
  return themis_app_shared_time(a, gpus) /
         themis_app_ideal_time(a, cluster_gpus, n_avg, max_demand);
}

}  // namespace sia
