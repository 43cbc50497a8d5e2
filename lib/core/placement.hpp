// Placement: sia-place's answer -- for every running job the nodes and GPU indices it
// holds, whether it must (re)start (its shape or GPU type changed, or it was not running),
// and which jobs were evicted or could not be placed.
// Thread-safety: plain values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/batch_setting.hpp"
#include "core/cluster.hpp"

namespace sia {

struct NodeGpus {
  std::string node;
  std::vector<int> gpus;  // ascending GPU indices on that node
};

struct JobPlacement {
  std::string job;
  int type = 0;
  std::vector<NodeGpus> nodes;  // by node name (sia's placer) or in visit order (reference)
  bool restart = false;
  BatchSetting batch;  // batch_size, local_bsz, accum_steps on the wire

  int gpu_count() const;
  std::vector<int> shape() const;  // GPUs per node, descending
};

struct Placement {
  std::string cluster_name;
  std::vector<JobPlacement> jobs;            // sorted by name
  std::vector<std::string> evicted;          // allocated but displaced to make room (sorted)
  std::vector<std::string> waiting;          // not placed this round (sorted)
  std::map<std::string, std::string> notes;  // why each job is where it is, or waits

  const JobPlacement* find(const std::string& job) const;
};

// With `explain`, each job carries its note and "waiting_reasons" maps waiting jobs to theirs.
nlohmann::json placement_to_json(const Placement& p, const Cluster& cluster, bool explain = false);
// Node names and GPU indices are checked against `cluster`.
Placement parse_placement(const Node& data, const Cluster& cluster);

}  // namespace sia
