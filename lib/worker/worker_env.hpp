// WorkerEnv: what a training worker learns from its environment -- the torchrun variables
// (RANK, WORLD_SIZE, MASTER_ADDR, ...) and the SIA_* ones sia-run sets (job, round, batch
// size, accumulation, checkpoint directory, report sink). The contract is documented in
// man/sia-worker.7; read_worker_env validates it and fails with status 78 (configuration)
// naming the variable. Variables a person running the worker by hand would not set have
// defaults (one rank, no accumulation).
// Thread-safety: plain values; read_worker_env only reads through `get`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/batch_setting.hpp"

namespace sia::worker {

struct WorkerEnv {
  int rank = 0;
  int local_rank = 0;
  int world_size = 1;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // required when world_size > 1
  std::string job = "sia-worker";
  long round = 0;
  std::string gpu_type;
  // SIA_BATCH_SIZE, SIA_LOCAL_BSZ, SIA_ACCUM_STEPS; global = local x world_size x micro-steps.
  BatchSetting batch;
  std::string ckpt_dir;
  bool restore = false;
  std::string report;           // file path, or tcp:// / ipc:// ZeroMQ endpoint; "" = none
  double report_interval = 30;  // seconds
  std::string batch_plan;       // SIA_BATCH_PLAN: in-place batch changes (batch_plan.hpp)
  // Optional (set by sia-profile, or by hand).
  int profile_steps = 0;              // SIA_PROFILE_STEPS: > 0 = measure and exit
  double init_batch_size = 0;         // SIA_INIT_BATCH_SIZE: B0 of the gradient statistics
  double stop_fraction = 0;           // SIA_STOP_FRACTION: stop (75) at this fraction (0: none)
  std::string device;                 // SIA_DEVICE: auto | cpu | cuda ("" = not set)
  double memory_limit_mb = 0;         // SIA_MEMORY_LIMIT_MB: CPU backend's memory budget
  double rendezvous_timeout = 300;    // SIA_RENDEZVOUS_TIMEOUT, seconds
  double peer_timeout = 600;          // SIA_PEER_TIMEOUT, seconds without a peer's answer
  std::vector<std::string> warnings;  // inconsistencies that were resolved

  int micro_steps() const { return batch.micro_steps(); }
  int nodes() const { return (world_size + local_world_size - 1) / local_world_size; }
};

using Getenv = std::function<const char*(const char*)>;

// Reads and validates the environment through `get` (std::getenv by default).
WorkerEnv read_worker_env(const Getenv& get);
WorkerEnv read_worker_env();

}  // namespace sia::worker
