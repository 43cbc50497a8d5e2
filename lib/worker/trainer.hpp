// The reference worker's training loop: synchronous data-parallel SGD with momentum on the
// synthetic dataset, honouring the worker contract of man/sia-worker.7 -- state restored
// by rank 0 and broadcast (so ranks need not share a file system), gradient accumulation,
// gradient statistics from the per-replica gradients, reports from rank 0 every
// SIA_REPORT_INTERVAL seconds and at exit, a graceful stop on SIGTERM agreed on by all ranks
// in the step's all-reduce (every rank finishes the same step; rank 0 checkpoints; every
// rank returns 75), and a profiling mode (SIA_PROFILE_STEPS) that measures and exits.
// train() returns 0 (done, or profiled) or 75 (preempted) and throws sia::Error otherwise;
// a failure on rank 0 while restoring or checkpointing is passed to every rank, so they
// all exit with its status.
// Thread-safety: one call per process (it installs signal handlers).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "worker/dataset.hpp"
#include "worker/mlp.hpp"
#include "worker/worker_env.hpp"

namespace sia::worker {

struct TrainOptions {
  DatasetConfig data;
  MlpShape shape;
  double lr = 0.05;  // at B0; scaled by sqrt(B / B0)
  double momentum = 0.9;
  std::uint64_t max_steps = 0;         // stop after this many optimizer steps (0: no limit)
  double max_epochs = 0;               // stop after this many passes over the data (0: no limit)
  double init_batch_size = 0;          // B0 (0: SIA_INIT_BATCH_SIZE, else the first batch size)
  std::string device = "auto";         // auto | cpu | cuda
  double memory_limit_mb = 0;          // CPU backend budget (0: SIA_MEMORY_LIMIT_MB, else none)
  std::uint64_t checkpoint_steps = 0;  // also checkpoint every N steps (0: never)
  int profile_warmup = 2;              // untimed steps before a profiling run's measured ones
};

using Log = std::function<void(const std::string&)>;

int train(const WorkerEnv& env, const TrainOptions& options, const Log& log);

}  // namespace sia::worker
