// The admission's inputs read off a round's goodput row (issue 34), the one way the
// simulator and the controller turn the estimator's model of a job into the table that
// plan_admission (deadline/admission.hpp) weighs: the row's own configurations, the best
// goodput of each (GPU type, GPU count) -- the estimates the round will use for the job.
// A guaranteed job's row is not limited by the scale-up rule (model/estimator.hpp), so it
// holds every count the job may run at.
// Work and rates are in progress units (iterations at the job's initial batch `b0`): the
// remaining work is the row's progress total - done, a rate is raw goodput / b0.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/goodput_matrix.hpp"
#include "deadline/admission.hpp"

namespace sia::deadline {

// The configurations of the job that `row` estimates; empty when b0 is not positive.
std::vector<GoodputPoint> admission_table(const GoodputRow& row, double b0, const Cluster& cluster);

// The remaining work of the row's job (0 without known progress).
double remaining_work(const GoodputRow& row);

// The admission question of a job whose round row is `row` (its table, remaining work and
// one restart), due at `deadline` (same clock as `now`).
GuaranteedJob guaranteed_question(const GoodputRow& row, double b0, const Cluster& cluster,
                                  double deadline, double now, double margin);

// Every GPU type's capacity, by name.
std::map<std::string, int> gpus_per_type(const Cluster& cluster);

}  // namespace sia::deadline
