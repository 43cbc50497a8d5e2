#include <algorithm>
#include <cmath>

#include "model/accuracy.hpp"
#include "sim/deadlines.hpp"
#include "sim/simulator.hpp"

namespace sia {

SimSummary summarize(const SimResult& r, const SimQuirks& quirks) {
  SimSummary s;
  s.jobs = static_cast<int>(r.jobs.size());
  s.rounds = static_cast<int>(r.rounds.size());
  s.reservations = r.reservations;
  for (const auto& rec : r.rounds) {
    s.lent_gpu_hours += rec.lent_gpus * r.round / 3600.0;
    s.take_backs += rec.take_backs;
    s.taken_back_gpus += rec.taken_back_gpus;
  }
  if (r.jobs.empty()) return s;
  std::vector<double> jct;
  double first_submit = r.jobs.front().submission, last_done = 0, gpu_s = 0, restarts = 0;
  int rho_n = 0, unfair = 0;
  for (const auto& j : r.jobs) {
    jct.push_back(j.jct);
    first_submit = std::min(first_submit, j.submission);
    last_done = std::max(last_done, j.completion);
    for (double g : j.gpu_seconds) gpu_s += g;
    restarts += j.restarts;
    if (j.rho) {
      ++rho_n;
      unfair += *j.rho > 1.0;
      s.worst_rho = std::max(s.worst_rho, *j.rho);
    }
  }
  double sum = 0;
  for (double x : jct) sum += x;
  s.avg_jct = sum / jct.size();
  s.median_jct = nearest_rank(jct, 50);
  if (quirks.p99_by_index) {
    std::vector<double> sorted = jct;
    std::sort(sorted.begin(), sorted.end());
    s.p99_jct = sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(0.99 * sorted.size()))];
  } else {
    s.p99_jct = nearest_rank(jct, 99);
  }
  s.makespan = last_done - first_submit;
  s.gpu_hours_per_job = gpu_s / 3600.0 / r.jobs.size();
  s.restarts_per_job = restarts / r.jobs.size();
  s.unfair_fraction = rho_n ? static_cast<double>(unfair) / rho_n : 0;
  s.rho_jobs = rho_n;
  // Contention and queue over the rounds between the first submission and the last
  // completion (the artifact's records span the same range).
  double csum = 0, qsum = 0;
  int n = 0;
  for (const auto& rec : r.rounds) {
    if (rec.t < first_submit || rec.t > last_done + r.round) continue;
    csum += rec.active;
    qsum += rec.active - rec.running;
    s.contention_max = std::max<double>(s.contention_max, rec.active);
    s.queue_max = std::max<double>(s.queue_max, rec.active - rec.running);
    ++n;
  }
  s.contention_mean = n ? csum / n : 0;
  s.queue_mean = n ? qsum / n : 0;
  if (!r.apps.empty()) {
    double act = 0;
    int unfair_apps = 0;
    for (const auto& a : r.apps) {
      act += a.act;
      if (!a.rho) continue;
      ++s.app_rho_count;
      unfair_apps += *a.rho > 1.0;
      s.worst_app_rho = std::max(s.worst_app_rho, *a.rho);
    }
    s.apps = static_cast<int>(r.apps.size());
    s.avg_act = act / r.apps.size();
    s.unfair_app_fraction =
        s.app_rho_count ? static_cast<double>(unfair_apps) / s.app_rho_count : 0;
  }
  if (!r.policy_runtimes.empty()) {
    s.policy_runtime_median = nearest_rank(r.policy_runtimes, 50);
    s.policy_runtime_p95 = nearest_rank(r.policy_runtimes, 95);
  }
  if (!r.round_runtimes.empty()) {
    s.round_runtime_median = nearest_rank(r.round_runtimes, 50);
    s.round_runtime_p95 = nearest_rank(r.round_runtimes, 95);
  }
  summarize_deadlines(r.jobs, s);
  return s;
}

}  // namespace sia
