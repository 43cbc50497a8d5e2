// The round keeps its promises (issue 34, docs in sia-ctl(1) DEADLINES): the one
// mechanism by which both the simulator and the controller give an admitted guaranteed
// job the goodput it needs to stay on schedule under Sia's policy.
// The row of such a job keeps only the configurations whose raw goodput reaches the goodput
// it needs from now on (policy/deadline_rows.hpp: remaining work over the time left less
// one restart), their goodput multiplied by kGuaranteedBoost; when none reaches it (it fell
// behind, or the model was optimistic), every configuration of its fastest type is kept
// so, the ILP growing it as fast as it may. When the configuration it runs in
// (row.current) still reaches what it needs without a restart, it is kept with only the
// configurations of at least kWorthAMove times its goodput: a move for a small gain costs
// a checkpoint-restore and can put it behind; one that doubles its speed (idle GPUs) pays. Its row
// is not limited by the scale-up rule (model/estimator.hpp). A priced term, not a hard constraint:
// the Sia policy lifts a guaranteed row's columns above all the best-effort jobs together
// (policy/sia_policy.cpp), so the ILP serves the guaranteed jobs first, and admission has kept
// their needs within the cluster, so the priced optimum meets them; when a node is lost the ILP
// still has a solution, best-effort jobs pay first. Thread-safety: pure functions.
#pragma once

#include <optional>

#include "core/goodput_matrix.hpp"
#include "core/job_spec.hpp"

namespace sia {

inline constexpr double kGuaranteedBoost = 10;
inline constexpr double kWorthAMove = 2;

// Marks `row` with its job's class and the seconds from `now` to its deadline (what the
// edf and elasticflow policies read).
void mark_deadline(GoodputRow& row, JobClass job_class, const std::optional<double>& deadline,
                   double now);

// Keeps an admitted guaranteed job's row on schedule as above; `b0` its initial batch (the
// unit of its progress). `margin`: admission's (controller.deadline_margin), the headroom
// every goodput it needs is asked with (what it needs x (1 + margin)), so that a model a
// little optimistic does not leave it behind. Nothing for a row without a deadline,
// progress or entries.
void keep_on_schedule(GoodputRow& row, double b0, double margin = 0);

}  // namespace sia
