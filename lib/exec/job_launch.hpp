// JobLaunch: how one job runs on this node for one generation -- its part of the
// placement, its command, the rendezvous, and for each rank its GPUs, log and worker
// environment (the torchrun variables plus SIA_*, see the worker contract in sia-run(1)).
// sia-run writes it to the job's state directory (launch.json) before starting the job's
// supervisor, which reads it back and starts exactly that.
// The placement part (everything above `generation`) is what the job *is* on this node:
// launch_change() compares it to decide whether a running job must restart, and
// batch_change() whether it only needs a new batch plan (SIA_BATCH_PLAN, no restart).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch_setting.hpp"
#include "core/node.hpp"
#include "core/placement.hpp"
#include "core/run_as.hpp"

namespace sia::exec {

struct RankLaunch {
  int rank = 0;                            // global: the placement's node order, then GPU index
  int local_rank = 0;                      // position on this node
  std::vector<int> gpus;                   // GPU indices on this node (CUDA_VISIBLE_DEVICES)
  std::string log;                         // stdout and stderr, appended across generations
  std::map<std::string, std::string> env;  // the worker variables
};

struct JobLaunch {
  // From the placement and the job spec; a change restarts the job.
  std::string job;
  std::string node;  // this node
  std::string gpu_type;
  std::vector<NodeGpus> nodes;  // every node of the job, in rank order
  std::vector<std::string> command;
  BatchSetting batch;  // the placement's; the workers keep the invariant (sia-worker(7))
  std::string master_addr;
  std::optional<RunAs> run_as;  // whom the ranks run as (exec/run_as.hpp); nullopt: sia-run's user
  int attempt = 0;              // the Jobs document's state.attempt: a new one starts the job again

  // Fixed when a generation starts.
  int generation = 0;  // SIA_ROUND: 1 at the first start, +1 at every restart
  int master_port = 0;
  bool restore = false;  // a checkpoint existed (SIA_CKPT_DIR/latest)
  // The job had trained before (its Jobs state gave a step) but no checkpoint was found:
  // it starts from step 0, and the RunPlan, the status and the controller say so.
  std::int64_t expected_step = 0;  // the step a restore was expected at (0: none)
  double stop_fraction = 0;        // SIA_STOP_FRACTION (0: none; JobState::stop_fraction)
  bool restore_missing = false;
  std::string cwd;  // the ranks' directory: the job's workdir, else sia-run's own
  std::string ckpt_dir;
  std::string report;           // the JSON Lines file the workers append reports to
  std::string batch_plan;       // SIA_BATCH_PLAN: where in-place batch changes are written
  int plan = 0;                 // batch plans written to this generation (0: the start's)
  double report_interval = 30;  // seconds
  double grace = 120;           // seconds between SIGTERM and SIGKILL
  std::vector<RankLaunch> ranks;

  int world_size() const;
  std::vector<int> local_gpus() const;  // this node's GPUs, ascending
};

// Why `running` must restart to become `wanted` ("GPUs 0,1 -> 2,3; nodes ..."), or "" when
// the job may go on: same GPUs, GPU type, nodes, command, rendezvous and attempt. A change of batch
// settings alone is no restart (batch_change) when a batch plan can carry it (can_resize).
std::string launch_change(const JobLaunch& running, const JobLaunch& wanted);
// The batch settings that differ ("batch_size 64 -> 128; local_bsz 16 -> 32"), or "".
std::string batch_change(const JobLaunch& running, const JobLaunch& wanted);
// Whether a batch plan can take `running` to `wanted`'s batch: both give a local batch and
// the running workers were started with SIA_BATCH_PLAN.
bool can_resize(const JobLaunch& running, const JobLaunch& wanted);

// "256" for an integral value, else the shortest form that reads back ("37.5").
std::string number_text(double v);
// "0,1,3"
std::string join_ints(const std::vector<int>& v, const char* sep = ",");

nlohmann::json job_launch_to_json(const JobLaunch& launch);
JobLaunch parse_job_launch(const Node& data);

}  // namespace sia::exec
