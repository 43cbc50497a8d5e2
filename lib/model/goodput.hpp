// Goodput of one job on one GPU type (Pollux's definition, with Sia's batch-size search):
// goodput = throughput x statistical efficiency, in samples/s at the initial batch size.
// optimize() picks the global batch, the per-GPU (atomic) batch and the gradient
// accumulation steps that maximise goodput on a given (nodes, replicas):
//   candidates: 50 geometric steps from max(B0, min_local * R) to max_batch (only max_batch
//   when the batch is fixed); local = B / R; s = ceil(local / max_local) - 1 (at least 1 on
//   one replica when local > B0, so the gradient noise can still be measured); b = ceil(local
//   / (s + 1)); candidates with b outside [min_local, max_local] score 0; the first best
//   wins (with none valid: the first candidate's batch, at goodput 0).
// Hybrid-parallel (pipeline) jobs: S stages, M micro-batches of one sample per pipeline;
//   iteration = 3 * ((S - 1) + M) * T_c(1) + T_n, throughput = R * M / iteration, with R the
//   number of pipelines (GPUs / S); the global batch is M * R and is never tuned.
// optimize() takes the candidates and their throughputs from a per-thread memo
// (batch_candidates.hpp): only the statistical efficiency is computed per call.
// Thread-safety: immutable after construction; optimize() is const and re-entrant.
#pragma once

#include <optional>

#include "core/batch_setting.hpp"
#include "core/profile.hpp"
#include "model/perf_model.hpp"

namespace sia {

struct BatchChoice {
  double goodput = 0;     // samples/s, at the initial batch size's efficiency
  double throughput = 0;  // samples/s
  double efficiency = 0;
  double batch_size = 0;  // global: R * local_bsz * (accum_steps + 1)
  int local_bsz = 0;      // per GPU, per micro-step
  int accum_steps = 0;    // extra micro-steps per optimizer step
  bool valid() const { return goodput > 0; }
  // What leaves the search: the three numbers as one value (batch_size is integral).
  BatchSetting setting() const {
    return {static_cast<std::int64_t>(batch_size), local_bsz, accum_steps};
  }
};

struct BatchLimits {
  double max_batch = 0;  // largest global batch to consider
  int min_local = 1;     // smallest per-GPU batch worth running
  int max_local = 1;     // per-GPU memory limit
  bool tune = true;      // false: the batch is fixed at max_batch
};

class GoodputFunction {
 public:
  GoodputFunction(PerfParams params, std::optional<GradientStats> gradient, double init_batch_size,
                  int pipeline_stages = 1, int microbatches = 48);

  const PerfParams& params() const { return params_; }
  double init_batch_size() const { return init_batch_size_; }

  // Goodput of a fully specified configuration.
  BatchChoice evaluate(int nodes, int replicas, int local_bsz, int accum_steps) const;
  // The best batch for (nodes, replicas): see the header comment.
  BatchChoice optimize(int nodes, int replicas, const BatchLimits& limits) const;
  // The batch a job would run with a fixed global batch (rigid, strong-scaling).
  BatchChoice fixed_batch(int nodes, int replicas, double batch, int max_local) const;

 private:
  BatchChoice pipeline(int nodes, int pipelines, const BatchLimits& limits) const;

  PerfParams params_;
  std::optional<GradientStats> gradient_;
  double init_batch_size_;
  int stages_;
  int microbatches_;
};

// Accumulation steps and per-GPU batch for a global batch on `replicas` GPUs whose memory
// holds `max_local` samples (the rule in the header comment, without the range check).
void split_batch(double batch, int replicas, int max_local, double init_batch_size, int* local_bsz,
                 int* accum_steps);

// numpy.geomspace semantics: `n` values from start to stop inclusive (descending if
// start > stop), endpoints exact.
void geomspace(double start, double stop, int n, double* out);

}  // namespace sia
