#include "sim/sim_results.hpp"

#include <algorithm>

#include "sim/searches.hpp"

namespace sia {

JobResult job_result(const SimJob& j, const std::string& app, const std::string& stop_reason,
                     double queued) {
  JobResult r;
  r.name = j.name();
  r.model = j.state().spec.model;
  r.app = app;
  r.stopped = j.stopped();
  r.stop_reason = stop_reason;
  r.submission = j.submission_time();
  r.completion = *j.completion_time();
  r.jct = r.completion - r.submission;
  r.restarts = j.restarts();
  r.queued = queued;
  r.gpu_seconds = j.gpu_seconds_by_type();
  r.contention = j.mean_contention();
  return r;
}

std::vector<double> whole_round_gpu_seconds(const SimJob& j, double allocated) {
  const std::vector<double>& by_type = j.gpu_seconds_by_type();
  double held = 0;
  for (double s : by_type) held += s;
  std::vector<double> out(by_type.size(), 0.0);
  for (std::size_t t = 0; t < by_type.size(); ++t) {
    out[t] = held > 0 ? allocated * by_type[t] / held : 0;
  }
  return out;
}

void add_app_results(SimResult& result, const std::vector<SimApp>& apps,
                     const std::vector<JobSpec>& workload, const std::vector<int>& result_at) {
  for (const auto& app : apps) {
    // An app with a trial past the horizon has not completed: left out, as its jobs are.
    if (std::any_of(app.trials.begin(), app.trials.end(),
                    [&](int i) { return result_at[i] < 0; })) {
      continue;
    }
    AppResult ar;
    ar.name = app.name;
    ar.trials = static_cast<int>(app.trials.size());
    ar.submission = result.jobs[result_at[app.trials.front()]].submission;
    for (int i : app.trials) {
      const JobResult& jr = result.jobs[result_at[i]];
      ar.stopped += jr.stopped;
      ar.submission = std::min(ar.submission, jr.submission);
      ar.completion = std::max(ar.completion, jr.completion);
      if (!jr.stopped && !workload[i].app.empty()) {
        const double m = simulated_loss(workload[i], 1.0);
        ar.best_metric = ar.best_metric ? std::min(*ar.best_metric, m) : m;
      }
    }
    ar.act = ar.completion - ar.submission;
    ar.contention = app.contention.n_avg();
    result.apps.push_back(std::move(ar));
  }
}

}  // namespace sia
