// How each of Slurm's nodes stands for sia, for `sia-ctl nodes` under [slurm]: its Slurm
// state, GPU type (the GRES type mapped through slurm.gres_types), GPUs, those held by
// sia's own jobs (is_sia_job over the driver's records, adopted: a record
// with no id yet counts only the job adoption takes) and by other jobs, and whether the
// rounds offer it -- the rule of the Slurm driver's nodes_up: offered_nodes, and every GPU
// usable by sia (usable_gpus) -- or why not, first reason first: not in the partition,
// Slurm's state (down, drained...), no GPUs, other jobs holding GPUs.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "slurm/slurm_cluster.hpp"
#include "slurm/slurm_jobs.hpp"
#include "slurm/slurm_nodes.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::slurm {

struct SlurmNodeView {
  std::string name;
  std::string state;     // "IDLE", "MIXED+DRAIN": the base state, then its flags
  std::string gpu_type;  // "" untyped; several types joined by ","
  long gpus = 0;
  long gpus_sia = 0;    // held by sia's own jobs
  long gpus_other = 0;  // held by any other job (another user's, or one sia does not own)
  bool offered = false;
  std::string why;  // why it is not offered ("" when it is)
};

// Nodes sorted by name. Errors as usable_gpus's.
std::vector<SlurmNodeView> node_views(const std::vector<SlurmNode>& nodes,
                                      const std::vector<SlurmJob>& jobs,
                                      const SlurmSettings& settings,
                                      const std::vector<OwnedJob>& owned);
// {"nodes": [{name, state, gpu_type, gpus, gpus_sia, gpus_other, offered, why}]}: the data
// of a SlurmNodeList document (sia-formats(5)).
nlohmann::json node_views_json(const std::vector<SlurmNodeView>& views);

}  // namespace sia::slurm
