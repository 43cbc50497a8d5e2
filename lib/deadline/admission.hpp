// Admission of guaranteed jobs (issue 34, docs/deadlines.md): can a job finish its
// remaining work by its deadline on the GPUs the guaranteed jobs admitted before it leave,
// and in which configuration at least cost? Inputs are plain values -- the remaining work,
// the job's goodput per (GPU type, GPU count) at its best batch, the free GPUs per type,
// the clock, the deadline and the margin -- so that the controller (from the estimator's
// row) and the simulator (from its own model) ask the same question.
// Work and goodput share one unit (samples at the job's efficiency, say): a configuration
// finishes at now + restart + remaining / goodput. It meets the deadline with margin m
// when now + restart + remaining * (1 + m) / goodput <= deadline: the margin covers the
// model's error on the work, not the restart, which is known. Its cost is
// gpus * (finish - now), in GPU-hours; the cheapest meeting configuration wins (equal
// costs -- a linear model's counts of a type -- the fewest GPUs, which leaves the most to
// the jobs after it; then the earlier finish, then the table's order).
// The simulator (sim/deadlines.hpp) and the controller (ctl/admission.hpp) both admit
// with plan_admission, on a table from the round's row (deadline/row_table.hpp).
// Thread-safety: pure functions.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sia::deadline {

// One configuration of the job: `gpus` GPUs of `gpu_type`, progressing at `goodput`.
struct GoodputPoint {
  std::string gpu_type;
  int gpus = 0;
  double goodput = 0;  // work per second; <= 0 or NaN: never finishes
};

// The margin when none is configured (controller.deadline_margin; the simulator's).
inline constexpr double kDefaultDeadlineMargin = 0.1;

struct AdmissionInput {
  double remaining_work = 0;
  std::vector<GoodputPoint> table;
  std::map<std::string, int> free_gpus;  // per GPU type
  double now = 0;
  double deadline = 0;
  double margin = kDefaultDeadlineMargin;  // controller.deadline_margin
  double restart_overhead = 0;             // seconds before a (re)started job progresses
};

inline constexpr double kNever = std::numeric_limits<double>::infinity();

struct AdmissionPlan {
  bool admitted = false;
  std::optional<GoodputPoint> config;  // the cheapest that meets the deadline
  double finish = kNever;              // when it finishes in `config`
  double gpu_hours = kNever;
  // When the job could finish at best on the free GPUs (no margin): what a refusal says;
  // `fastest` is that configuration.
  double best_finish = kNever;
  std::optional<GoodputPoint> fastest;
};

// Seconds from now to finish `work` at `goodput` after `restart_overhead`; kNever when it
// never does.
double time_to_finish(double work, double goodput, double restart_overhead);

AdmissionPlan plan_admission(const AdmissionInput& in);

// The goodput a job needs from now on to finish `remaining_work` by `deadline`:
// remaining / (deadline - now - restart_overhead); kNever when no time is left.
double required_goodput(double remaining_work, double now, double deadline,
                        double restart_overhead);

// A guaranteed job already admitted (or being re-checked): its own question, less the
// free GPUs (filled in by admit_in_order).
struct GuaranteedJob {
  std::string name;
  AdmissionInput input;  // free_gpus ignored
  // Admitted before: when it no longer meets its deadline it still holds the fastest
  // configuration the others leave (a promise is not withdrawn; it is at risk).
  bool held = false;
};

struct OrderedAdmission {
  std::string name;
  AdmissionPlan plan;
};

// Admits `jobs` in order on `total_gpus` per type: each job's cheapest plan on what the
// jobs before it left (a refused job takes nothing, a held one its fastest). The round
// re-checks its admitted jobs so; a submission asks for the admitted jobs followed by the
// new one.
std::vector<OrderedAdmission> admit_in_order(const std::vector<GuaranteedJob>& jobs,
                                             const std::map<std::string, int>& total_gpus);

}  // namespace sia::deadline
