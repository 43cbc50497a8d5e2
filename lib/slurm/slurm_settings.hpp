// SlurmSettings: how sia runs a cluster through Slurm (sia-config(5), [slurm]) -- which
// Slurm commands and configuration it uses, what it owns there, how Slurm's GPU types map
// to the catalog's, and where jobs' checkpoints and reports live on shared storage.
// Present in a configuration: the rounds are realised through Slurm (no sia agents).
// Thread-safety: plain values.
#pragma once

#include <map>
#include <string>

namespace sia::slurm {

struct SlurmSettings {
  bool enabled = false;    // rounds go through Slurm (sbatch/scancel), not [nodes] or agents
  std::string slurm_conf;  // SLURM_CONF for every Slurm command; empty: Slurm's default
  std::string bin_dir;     // where scontrol, sinfo, sbatch, squeue, scancel live; empty: PATH
  std::string partition;   // the partition sia owns; empty: every partition it may use
  std::string account;     // --account of the jobs it submits; empty: none
  // Slurm GRES type -> catalog GPU type (e.g. rtx2080ti -> rtx). A type not here must
  // be a catalog type itself, else it is refused with one line naming it.
  std::map<std::string, std::string> gres_types;
  // On storage every node shares: checkpoints (CKPT/JOB) and the files through which
  // workers' reports and batch plans pass between the nodes and the controller.
  std::string shared_dir;
  double grace_seconds = 30;    // SIGTERM to exit (checkpoint-stop) before SIGKILL
  double report_interval = 30;  // seconds between a worker's reports (SIA_REPORT_INTERVAL)
};

}  // namespace sia::slurm
