#include "sim/deadlines.hpp"

#include <algorithm>
#include <cmath>

#include "deadline/row_table.hpp"
#include "round/guarantee.hpp"

namespace sia {

bool has_deadlines(const std::vector<JobSpec>& workload) {
  return std::any_of(workload.begin(), workload.end(), [](const JobSpec& s) {
    return s.deadline || s.job_class == JobClass::guaranteed;
  });
}

SimDeadlines::SimDeadlines(const std::vector<JobSpec>& workload, const Cluster& cluster,
                           const Catalog& catalog, bool sia_policy,
                           std::optional<std::vector<Reservation>> reservations)
    : cluster_(cluster), sia_(sia_policy), reservations_(std::move(reservations)) {
  for (const auto& s : workload) {
    Job j;
    j.job_class = s.job_class;
    j.deadline = s.deadline;
    j.b0 = s.init_batch_size > 0 ? s.init_batch_size : catalog.get(s.model).init_batch_size;
    jobs_.push_back(j);
  }
  free_ = deadline::gpus_per_type(cluster);
}

void SimDeadlines::decide(Job& j, double now, const GoodputRow& row) {
  j.decided = true;
  if (j.job_class != JobClass::guaranteed || !row.progress) return;
  deadline::AdmissionInput in = deadline::guaranteed_question(row, j.b0, cluster_, *j.deadline, now,
                                                              deadline::kDefaultDeadlineMargin)
                                    .input;
  in.free_gpus = free_;
  if (reservations_) {
    const auto all = deadline::gpus_per_type(cluster_);
    for (const auto& [type, left] : gpus_unreserved(*reservations_, cluster_, now, *j.deadline)) {
      int& f = in.free_gpus[type];
      f = std::max(0, f - (all.at(type) - left));
    }
  }
  const deadline::AdmissionPlan plan = deadline::plan_admission(in);
  if (!plan.admitted) return;
  j.admitted = true;
  j.type = plan.config->gpu_type;
  j.gpus = j.plan_gpus = plan.config->gpus;
  j.plan_finish = plan.finish;
  free_[j.type] -= j.gpus;
}

bool SimDeadlines::refused_now(int i, double now, const GoodputRow& row) {
  Job& j = jobs_[i];
  if (j.decided) return false;
  decide(j, now, row);
  return j.job_class == JobClass::guaranteed && !j.admitted;
}

void SimDeadlines::adjust(int i, double now, GoodputRow& row) {
  Job& j = jobs_[i];
  if (!j.decided) decide(j, now, row);
  mark_deadline(row, j.admitted ? JobClass::guaranteed : JobClass::best_effort, j.deadline, now);
  if (sia_ && j.admitted) keep_on_schedule(row, j.b0, deadline::kDefaultDeadlineMargin);
}

void SimDeadlines::ended(int i) {
  Job& j = jobs_[i];
  if (j.admitted && j.gpus > 0) free_[j.type] += j.gpus;
  j.gpus = 0;
}

void SimDeadlines::annotate(int i, JobResult& r) const {
  const Job& j = jobs_[i];
  r.job_class = j.job_class;
  r.deadline = j.deadline;
  r.admitted = j.admitted;
  r.deadline_met = j.deadline && !r.stopped && r.completion <= *j.deadline;
  if (j.admitted) {
    r.plan_type = j.type;
    r.plan_gpus = j.plan_gpus;
    r.plan_finish = j.plan_finish;
  }
}

void summarize_deadlines(const std::vector<JobResult>& jobs, SimSummary& s) {
  int met_g = 0, be_deadlines = 0, met_be = 0, be = 0, rho_n = 0;
  double jct = 0, rho = 0, gpu_seconds = 0;
  bool any = false;
  for (const auto& j : jobs) {
    if (!j.job_class) continue;
    any = true;
    for (double g : j.gpu_seconds) gpu_seconds += g;
    if (j.job_class == JobClass::guaranteed) ++s.guaranteed;
    if (j.admitted) {
      ++s.admitted;
      met_g += j.deadline_met;
      continue;
    }
    ++be;  // ran best-effort (refused guaranteed jobs too)
    jct += j.jct;
    if (j.rho) {
      ++rho_n;
      rho += *j.rho;
      s.best_effort_worst_rho = std::max(s.best_effort_worst_rho, *j.rho);
    }
    if (j.deadline) {
      ++be_deadlines;
      met_be += j.deadline_met;
    }
  }
  if (!any) return;
  s.deadlines = true;
  s.best_effort_jobs = be;
  s.best_effort_with_deadline = be_deadlines;
  s.admitted_fraction = s.guaranteed ? static_cast<double>(s.admitted) / s.guaranteed : 0;
  s.guaranteed_met_fraction = s.admitted ? static_cast<double>(met_g) / s.admitted : 0;
  s.best_effort_met_fraction = be_deadlines ? static_cast<double>(met_be) / be_deadlines : 0;
  s.best_effort_avg_jct = be ? jct / be : 0;
  s.best_effort_mean_rho = rho_n ? rho / rho_n : 0;
  s.gpu_hours = gpu_seconds / 3600;
}

}  // namespace sia
