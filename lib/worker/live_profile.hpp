// Live profiling (sia-profile run): measures a job's step time on one device per GPU type
// by running its worker alone (WORLD_SIZE=1, no accumulation) in profiling mode
// (SIA_PROFILE_STEPS=N: N measured optimizer steps at SIA_LOCAL_BSZ, one report, exit 0),
// at local batch sizes doubling from `start_bsz` until the worker exits 71 (out of memory)
// or `max_bsz` is passed. Each run's last report gives one Profile point (nodes 1,
// replicas 1); the gradient statistics are the mean over the runs (all at B0); cost_seconds
// is the wall time of the whole profile. With `cpu`, the runs use a CPU slot
// (CUDA_VISIBLE_DEVICES="" and SIA_DEVICE=cpu) once, and the points stand for every type.
// Errors: Error(69) when a worker cannot run, fails otherwise, times out or reports nothing,
// or when even the first batch size does not fit.
// Thread-safety: one call at a time (it runs child processes).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/profile.hpp"

namespace sia::worker {

struct LiveProfileOptions {
  std::string job = "job";
  std::string model;                   // recorded in the profile when known
  std::vector<std::string> command;    // the worker and its arguments
  std::vector<std::string> gpu_types;  // the types the points are for (at least one)
  bool cpu = false;
  int device = 0;  // CUDA device index on this machine (not cpu)
  int start_bsz = 8;
  int max_bsz = 4096;
  int steps = 20;              // measured optimizer steps per run
  double init_batch_size = 0;  // B0 for the gradient statistics (0: start_bsz)
  double memory_limit_mb = 0;  // with cpu: the worker's memory budget (0: none)
  double timeout = 600;        // seconds per run
  std::string work_dir;        // logs and reports of each run
};

Profile live_profile(const LiveProfileOptions& options,
                     const std::function<void(const std::string&)>& log);

// The sia-worker beside the running program (else "sia-worker", found in PATH).
std::string default_worker_command();

}  // namespace sia::worker
