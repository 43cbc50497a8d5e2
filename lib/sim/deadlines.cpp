#include "sim/deadlines.hpp"

#include <algorithm>
#include <cmath>

#include "policy/deadline_rows.hpp"
#include "sim/deadline_admission.hpp"

namespace sia {

namespace {

// Every GPU count a job may hold on a type (1 up to its capacity).
std::vector<int> counts_of(const GpuType& t) {
  std::vector<int> out;
  for (int g = 1; g <= t.capacity(); ++g) out.push_back(g);
  return out;
}

// The admission's options from the round's row (deadlines.hpp): rigid entries as they are,
// else each type's best goodput per GPU at every count of the type. Rates in progress
// units (iterations at the initial batch) per second.
std::vector<AdmissionOption> options_of(const GoodputRow& row, double b0, const Cluster& cluster) {
  std::vector<AdmissionOption> out;
  if (!(b0 > 0)) return out;
  if (row.adaptivity == Adaptivity::rigid) {
    for (const auto& e : row.entries)
      out.push_back({e.config.type, e.config.gpus, e.raw_goodput / b0});
    return out;
  }
  std::vector<double> per_gpu(cluster.types.size(), 0.0);
  for (const auto& e : row.entries) {
    double& p = per_gpu[e.config.type];
    p = std::max(p, e.raw_goodput / std::max(1, e.config.gpus));
  }
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    if (!(per_gpu[t] > 0)) continue;
    for (int g : counts_of(cluster.types[t])) {
      out.push_back({static_cast<int>(t), g, g * per_gpu[t] / b0});
    }
  }
  return out;
}

}  // namespace

bool has_deadlines(const std::vector<JobSpec>& workload) {
  return std::any_of(workload.begin(), workload.end(), [](const JobSpec& s) {
    return s.deadline || s.job_class == JobClass::guaranteed;
  });
}

SimDeadlines::SimDeadlines(const std::vector<JobSpec>& workload, const Cluster& cluster,
                           const Catalog& catalog, bool sia_policy)
    : cluster_(cluster), sia_(sia_policy) {
  for (const auto& s : workload) {
    Job j;
    j.job_class = s.job_class;
    j.deadline = s.deadline;
    j.b0 = s.init_batch_size > 0 ? s.init_batch_size : catalog.get(s.model).init_batch_size;
    jobs_.push_back(j);
  }
  for (const auto& t : cluster.types) free_.push_back(t.capacity());
}

void SimDeadlines::decide(Job& j, double now, const GoodputRow& row) {
  j.decided = true;
  if (j.job_class != JobClass::guaranteed || !row.progress) return;
  AdmissionInput in;
  in.work = std::max(0.0, row.progress->total - row.progress->done);
  in.options = options_of(row, j.b0, cluster_);
  in.free_gpus = free_;
  in.now = now;
  in.deadline = *j.deadline;
  in.margin = kAdmissionMargin;
  in.restart = row.restart_penalty;
  const AdmissionDecision d = admit(in);
  if (!d.admitted) return;
  j.admitted = true;
  j.type = in.options[d.option].type;
  j.gpus = in.options[d.option].gpus;
  free_[j.type] -= j.gpus;
}

void SimDeadlines::adjust(int i, double now, GoodputRow& row) {
  Job& j = jobs_[i];
  if (!j.decided) decide(j, now, row);
  row.job_class = j.admitted ? JobClass::guaranteed : JobClass::best_effort;
  if (j.deadline) row.deadline_in = *j.deadline - now;
  if (!sia_ || !j.admitted || row.entries.empty()) return;
  // Sia's priority: the configurations that keep it on schedule, boosted.
  const auto need = required_goodput(row, j.b0);
  auto reaches = [&](const GoodputEntry& e) { return need && e.raw_goodput >= *need; };
  std::vector<GoodputEntry> kept;
  for (const auto& e : row.entries) {
    if (reaches(e)) kept.push_back(e);
  }
  if (kept.empty()) {  // none reaches it yet: the fastest type's configurations
    const auto best = std::max_element(
        row.entries.begin(), row.entries.end(),
        [](const GoodputEntry& a, const GoodputEntry& b) { return a.raw_goodput < b.raw_goodput; });
    for (const auto& e : row.entries) {
      if (e.config.type == best->config.type) kept.push_back(e);
    }
  }
  for (auto& e : kept) e.goodput *= kGuaranteedBoost;
  row.entries = std::move(kept);
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
