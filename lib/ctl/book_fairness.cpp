// JobBook's finish-time fairness: the round record's fairness field, and rho of jobs and
// apps (job_book.hpp).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ctl/job_book.hpp"
#include "ctl/record_fields.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

json figures(const std::set<std::string>& names,
             const std::map<std::string, FairnessFigure>& figs) {
  json out = json::object();
  for (const auto& name : names) {
    json f = json::object();
    if (auto it = figs.find(name); it != figs.end()) {
      f["t_sh"] = it->second.t_sh;
      f["t_id"] = it->second.t_id;
      if (it->second.measured) f["measured"] = true;
    }
    out[name] = f;
  }
  return out;
}

// Counts the round in `fb` and takes its figure, when `f` (the record's entry) has one.
void note(FairnessBook& fb, int units, const json& f) {
  fb.count(units);
  if (!f.is_object()) return;
  const auto t_sh = finite(f, "t_sh"), t_id = finite(f, "t_id");
  if (!t_sh || !t_id || !(*t_sh > 0) || !(*t_id > 0)) return;
  fb.t_sh = *t_sh;
  fb.t_id = *t_id;
  fb.measured = bool_of(f, "measured");
}

}  // namespace

json make_round_fairness(int units, const std::set<std::string>& jobs,
                         const std::set<std::string>& apps, const FairnessEstimate& est) {
  return {{"units", units}, {"jobs", figures(jobs, est.jobs)}, {"apps", figures(apps, est.apps)}};
}

void JobBook::apply_round_fairness(const json& f) {
  if (!f.is_object()) return;
  const std::int64_t units = int_of(f, "units", 0);
  if (units < 1 || units > 100'000'000) return;
  if (auto js = f.find("jobs"); js != f.end() && js->is_object()) {
    for (auto it = js->begin(); it != js->end(); ++it) {
      auto j = jobs_.find(it.key());
      if (j != jobs_.end() && !is_ended(j->second.state))
        note(j->second.fair, static_cast<int>(units), it.value());
    }
  }
  if (auto as = f.find("apps"); as != f.end() && as->is_object()) {
    for (auto it = as->begin(); it != as->end(); ++it) {
      auto a = apps_.find(it.key());
      if (a != apps_.end()) note(a->second.fair, static_cast<int>(units), it.value());
    }
  }
}

std::optional<double> job_rho(const BookJob& job, double now) {
  if (!(job.fair.t_id > 0)) return std::nullopt;
  if (job.state == Lifecycle::finished) {
    return std::max(0.0, job.end_time - job.submit_time) / job.fair.t_id;
  }
  if (is_ended(job.state)) return std::nullopt;
  return std::max(job.fair.t_sh, now - job.submit_time) / job.fair.t_id;
}

std::optional<double> measured_rate(const BookJob& job) {
  const json& rep = job.last_report;
  if (!job.placed || job.restoring || !rep.is_object() || job.generation <= 0 ||
      int_of(rep, "round", -1) != job.generation) {
    return std::nullopt;
  }
  // Its step time there: the latest report's, else (a report without timings: a batch
  // change's) the mean of its reports on these GPUs at the nearest local batch, scaled to
  // this one (a step's time grows with it).
  double step_time = finite(rep, "step_time").value_or(0);
  int nearest = 0;
  for (const auto& o : job.observations) {
    const int local = o.point.local_bsz;
    if (step_time > 0 || o.point.gpu_type != job.placed->gpu_type ||
        o.point.replicas != job.placed->gpus() || local < 1 || !(o.point.step_time > 0) ||
        (nearest && std::abs(local - job.placed->batch.local) >=
                        std::abs(nearest - job.placed->batch.local))) {
      continue;
    }
    nearest = local;
  }
  for (const auto& o : job.observations) {
    if (!(step_time > 0) && nearest && o.point.gpu_type == job.placed->gpu_type &&
        o.point.replicas == job.placed->gpus() && o.point.local_bsz == nearest) {
      step_time = o.point.step_time * std::max(1, job.placed->batch.local) / nearest;
    }
  }
  if (!(step_time > 0)) return std::nullopt;
  double per_step = 0;
  if (job.gen_step >= 0 && job.step > job.gen_step && job.progress > job.gen_progress) {
    per_step = (job.progress - job.gen_progress) / static_cast<double>(job.step - job.gen_step);
  } else if (job.step > 0 && job.progress > 0) {
    per_step = job.progress / static_cast<double>(job.step);
  }
  const double rate = per_step / step_time;
  if (!(rate > 0) || !std::isfinite(rate)) return std::nullopt;
  return rate;
}

std::optional<double> app_rho(const JobBook& book, const BookApp& app, double now) {
  if (!(app.fair.t_id > 0)) return std::nullopt;
  bool live = false, finished = false;
  double end = 0;
  for (const auto& t : app.trials) {
    const BookJob* b = book.find(t);
    if (!b) continue;  // forgotten: it ended
    live = live || !is_ended(b->state);
    finished = finished || b->state == Lifecycle::finished;
    end = std::max(end, b->end_time);
  }
  if (live) return std::max(app.fair.t_sh, now - app.submit_time) / app.fair.t_id;
  if (!finished) return std::nullopt;
  return std::max(0.0, end - app.submit_time) / app.fair.t_id;
}

}  // namespace sia::ctl
