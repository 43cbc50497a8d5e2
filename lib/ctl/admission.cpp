#include "ctl/admission.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"
#include "core/time_text.hpp"
#include "ctl/stages.hpp"
#include "deadline/row_table.hpp"
#include "round/reservations.hpp"

namespace sia::ctl {

namespace {

bool is_guaranteed(const JobSpec& s) {
  return s.job_class == JobClass::guaranteed && s.deadline;
}

// When the job could finish at best if it waited for every job admitted before it to end
// (its plan's finish, else its best), on the whole cluster: what a refusal says when the
// GPUs they leave cannot run it at all.
double finish_after_admitted(const deadline::GuaranteedJob& job,
                             const std::vector<deadline::OrderedAdmission>& before,
                             const std::map<std::string, int>& capacity) {
  deadline::AdmissionInput in = job.input;
  for (const auto& a : before) {
    const double end = a.plan.admitted ? a.plan.finish : a.plan.best_finish;
    if (end != deadline::kNever) in.now = std::max(in.now, end);
  }
  in.free_gpus = capacity;
  return deadline::plan_admission(in).best_finish;
}

// "; reservations hold 4 of its 8 a100 GPUs before then" when `capacity` is short of the
// cluster's GPUs of a type, else "".
std::string reserved_note(const AdmissionScene& scene, const std::map<std::string, int>& capacity) {
  std::string held;
  for (const auto& [type, gpus] : deadline::gpus_per_type(scene.cluster)) {
    const auto it = capacity.find(type);
    const int left = it == capacity.end() ? gpus : it->second;
    if (left >= gpus) continue;
    held += std::string(held.empty() ? "" : ", ") + std::to_string(gpus - left) + " of its " +
            std::to_string(gpus) + " " + type;
  }
  return held.empty() ? "" : "; reservations hold " + held + " GPUs before then";
}

// The one line of a refusal: `best` when it could finish at best, `after` whether only
// after the jobs admitted before it (none of its configurations fits what they leave),
// `note` what reservations hold.
std::string refusal(const JobSpec& spec, double best, bool after, double margin,
                    const std::string& note) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g%%", margin * 100);
  std::string msg = spec.name + ": deadline: " + utc_text(*spec.deadline) +
                    " cannot be met (with the " + pct + " margin): ";
  if (best == deadline::kNever) return msg + "it cannot finish on this cluster" + note;
  msg += after ? "the guaranteed jobs admitted before it hold the GPUs it could use; it could "
                 "finish by " +
                     utc_text(best) + " at best, after them"
               : "on the GPUs the guaranteed jobs admitted before it leave it could finish by " +
                     utc_text(best) + " at best";
  return msg + note + " (--or-best-effort submits it as best-effort)";
}

}  // namespace

std::map<std::string, int> scene_capacity(const AdmissionScene& scene) {
  return scene.capacity.empty() ? deadline::gpus_per_type(scene.cluster) : scene.capacity;
}

bool has_guaranteed(const Submission& s) {
  return std::any_of(s.jobs.begin(), s.jobs.end(), is_guaranteed);
}

deadline::GuaranteedJob admission_question(JobState& state, const AdmissionScene& scene,
                                           bool held) {
  const JobSpec& spec = state.spec;
  GoodputRow row = scene.estimator.estimate_job(state);
  if (!row.progress) {
    throw Error(ExitStatus::data,
                spec.name +
                    ": class: a guaranteed job needs a known amount of work (a catalog "
                    "model's target progress); none is known");
  }
  deadline::GuaranteedJob j =
      deadline::guaranteed_question(row, scene.estimator.init_batch_size(state), scene.cluster,
                                    *spec.deadline, scene.now, scene.margin);
  j.held = held;
  return j;
}

std::vector<deadline::GuaranteedJob> admitted_jobs(const JobBook& book,
                                                   const std::vector<PendingRequest>& pending,
                                                   const AdmissionScene& scene) {
  std::vector<const BookJob*> active = book.active();
  std::sort(active.begin(), active.end(),
            [](const BookJob* a, const BookJob* b) { return a->order < b->order; });
  std::vector<deadline::GuaranteedJob> out;
  auto add = [&](JobState state) {
    try {
      out.push_back(admission_question(state, scene, true));
    } catch (const Error&) {
      // A job the estimator cannot read (the round fails it) holds nothing.
    }
  };
  for (const BookJob* b : active) {
    if (is_guaranteed(b->spec)) add(book.job_state(*b, scene.now));
  }
  for (const auto& p : pending) {
    for (const auto& spec : p.guaranteed) {
      if (book.find(spec.name)) continue;  // taken in by a round since the inbox was read
      JobState s;
      s.spec = spec;
      s.path = spec.name;
      if (is_guaranteed(spec)) add(std::move(s));
    }
  }
  return out;
}

std::vector<deadline::OrderedAdmission> admit_guaranteed(
    Submission& s, std::vector<deadline::GuaranteedJob> admitted, const AdmissionScene& scene) {
  const auto total = scene_capacity(scene);
  std::vector<deadline::OrderedAdmission> out;
  for (JobSpec& spec : s.jobs) {
    if (!is_guaranteed(spec)) continue;
    JobState state;
    state.spec = spec;
    state.path = spec.name;
    admitted.push_back(admission_question(state, scene, false));
    const auto plans = deadline::admit_in_order(admitted, total);
    const deadline::AdmissionPlan& plan = plans.back().plan;
    if (plan.admitted) {
      admitted.back().held = true;
      out.push_back(plans.back());
      continue;
    }
    if (s.or_best_effort) {
      spec.job_class = JobClass::best_effort;
      admitted.pop_back();
      continue;
    }
    const bool after = plan.best_finish == deadline::kNever;
    const double best =
        after ? finish_after_admitted(admitted.back(), {plans.begin(), plans.end() - 1}, total)
              : plan.best_finish;
    throw Error(ExitStatus::data,
                refusal(spec, best, after, scene.margin, reserved_note(scene, total)));
  }
  return out;
}

std::vector<deadline::OrderedAdmission> admit_submission(
    Submission& s, const JobBook& book, const std::vector<PendingRequest>& pending,
    const Settings& config, const Catalog& catalog, const std::string& profiles_file, double now) {
  if (!has_guaranteed(s)) return {};
  const auto first = std::find_if(s.jobs.begin(), s.jobs.end(), is_guaranteed);
  if (config.controller.cluster.empty()) {
    throw Error(ExitStatus::data, first->name +
                                      ": class: no cluster is configured (controller.cluster) "
                                      "to admit a guaranteed job on");
  }
  const Cluster cluster = read_cluster(config.controller.cluster);
  const auto estimator = controller_estimator(config, cluster, catalog, profiles_file);
  AdmissionScene scene{cluster, *estimator, now, config.controller.deadline_margin, {}};
  std::vector<deadline::GuaranteedJob> admitted = admitted_jobs(book, pending, scene);
  if (!config.controller.reservations.empty()) {
    double horizon = now;
    for (const auto& j : admitted) horizon = std::max(horizon, j.input.deadline);
    for (const auto& spec : s.jobs) {
      if (is_guaranteed(spec)) horizon = std::max(horizon, *spec.deadline);
    }
    scene.capacity = gpus_unreserved(read_reservations(config.controller.reservations, cluster),
                                     cluster, now, horizon);
  }
  return admit_guaranteed(s, std::move(admitted), scene);
}

}  // namespace sia::ctl
