// `sia-ctl simulate --deadlines SHARE[:SEED]` (issue 34): a seeded share of a trace's jobs
// become guaranteed, each with a deadline submission + f x its ideal time on its fair
// share, f uniform in [0.5, 2.0] (the deadlines of ElasticFlow's evaluation, Gu et al.,
// ASPLOS '23). Every draw depends only on the seed and the job's name, so a job drawn at
// share 0.3 is also drawn at 0.5, with the same f.
// The ideal time on its fair share, from the catalog alone: on each GPU type the job may
// use, its fair share V = the type's GPUs / n, n the trace's jobs submitted in the hour up
// to its submission (itself included), at most the GPUs the model was measured on
// (max_profiled_nodes x GPUs per node); the job runs there at V x the model's one-GPU
// throughput (ModelGpu::single_gpu_throughput: linear scaling) with the statistical
// efficiency of its initial batch, so its target progress takes
//   target_progress x init_batch_size x slowdown / (V x throughput)
// seconds; the ideal time is the shortest over the types.
// Thread-safety: pure functions (the catalog loads the models it reads: not thread-safe).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/job_spec.hpp"
#include "model/catalog.hpp"

namespace sia {

struct DeadlineDraw {
  double share = 0;  // fraction of the jobs made guaranteed, [0, 1]
  std::uint64_t seed = 1;
};

// "SHARE" or "SHARE:SEED"; Error(usage) naming --deadlines otherwise.
DeadlineDraw parse_deadline_draw(const std::string& text);

// The factor f in [0.5, 2.0) of job `name` for `seed`.
double deadline_factor(const std::string& name, std::uint64_t seed);

// The ideal time on its fair share (above) of a job whose type shares are divided by
// `n` jobs (n >= 1); Error(data) naming the job when no type of the cluster can run it.
double ideal_fair_share_seconds(const JobSpec& spec, const ModelInfo& model, const Cluster& cluster,
                                int n);

// Makes the drawn share of `jobs` (in submission order) guaranteed with their deadlines;
// jobs that already have a class or a deadline of their own keep them.
void assign_deadlines(std::vector<JobSpec>& jobs, const DeadlineDraw& draw, const Cluster& cluster,
                      const Catalog& catalog);

}  // namespace sia
