// What a deadline-aware policy reads off a GoodputMatrix row (issue 34): the goodput a job
// needs to meet its deadline, and ElasticFlow's minimum satisfactory share (Gu et al.,
// ASPLOS '23) -- the fewest GPUs of one type that reach it.
// Units: raw goodput (samples/s at the initial batch's efficiency); progress counts
// iterations at the initial batch, so a job's remaining work is (total - done) x B0.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "core/goodput_matrix.hpp"

namespace sia {

// The raw goodput the job needs from now on to finish by its deadline, its restart
// penalty (one checkpoint-restore) deducted from the time left: remaining work /
// (deadline_in - restart_penalty); +inf when no time is left. Absent without a deadline
// or without known progress.
std::optional<double> required_goodput(const GoodputRow& row);
// The same with the job's initial batch given (a row without the baselines' model info);
// without `restart`, in the configuration it runs in (no restart deducted).
std::optional<double> required_goodput(const GoodputRow& row, double init_batch_size,
                                       bool restart = true);

// The entry with the fewest GPUs (then the highest goodput) whose raw goodput reaches
// `need` and whose type has that many of `free_gpus` left; -1 when none.
int min_satisfactory_entry(const GoodputRow& row, double need, const std::vector<int>& free_gpus);

}  // namespace sia
