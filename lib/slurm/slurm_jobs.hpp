// Slurm's jobs as `scontrol -d -o show job` prints them (one job a line): id, name, user,
// partition, state, nodes, heterogeneous job id, comment (where sia's mark is: job_mark.hpp) and
// the GPUs it holds on each node (the "Nodes=... GRES=gpu:TYPE:N(IDX:...)" details). parse_jobs
// takes any text: a malformed line is one Error(data) naming the line and the field. Thread-safety:
// pure functions, plain values.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/slurm_fields.hpp"

namespace sia::slurm {

struct SlurmJob {
  std::string id;
  std::string het_job_id;  // HetJobId: the first component's id; "" outside a heterogeneous job
  std::string name;
  long user_id = -1;  // UserId=NAME(UID)
  std::string partition;
  std::string state;               // RUNNING, PENDING, COMPLETING, ...
  std::vector<std::string> nodes;  // NodeList, expanded
  std::string comment;
  // SubmitTime (slurmctld's clock, whole seconds, the local time zone scontrol printed it
  // in), seconds since the epoch; 0 when not given or not a time ("Unknown"). Read only
  // after UserId, so that no text in the job name stands for it.
  double submit_time = 0;
  std::map<std::string, std::vector<GpuGres>> gpus_per_node;  // node -> its GPUs

  // Holds its nodes' resources now (running, suspended, completing, configuring...).
  bool holds_nodes() const;
  long gpus_on(const std::string& node) const;
};

std::vector<std::string> show_jobs_args();
// "2026-12-05T08:40:00" (local time) -> seconds since the epoch; 0 when it is not one.
double parse_slurm_time(std::string_view text);
std::vector<SlurmJob> parse_jobs(std::string_view text);

}  // namespace sia::slurm
