// Slurm batches: how one generation of a job becomes one Slurm job (sbatch) -- the
// submission's argv and the batch script it runs, both pure functions of the job's node
// launches (exec/node_plan.hpp: plan_node then prepare_generation, as sia-run builds them,
// so the ranks get the worker contract's environment of sia-worker(7) unchanged).
//   - the Slurm job is on exactly the job's nodes: --nodelist, --nodes, and per node
//     --gres=gpu:TYPE:N with N tasks; nodes holding different GPU counts make a
//     heterogeneous job, one component per node (srun --het-group);
//   - its mark: job name sia.JOB.GENERATION and --comment=sia:JOB:GENERATION, by which a
//     restarted controller finds (adopts) it in squeue;
//   - the script runs one srun per node, each starting that node's ranks; every task
//     re-enters the script ("rank" mode), picks its rank by SLURMD_NODENAME and
//     SLURM_LOCALID, exports that rank's variables (CUDA_VISIBLE_DEVICES is Slurm's: it
//     binds the GPUs) and execs the job's command in its working directory, output
//     appended to the rank's log. The script exits with the first failing srun's status
//     and writes that status to EXIT_FILE first (atomically), so the controller learns
//     how the generation ended without Slurm accounting.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/job_launch.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::ctl {

// "sia.JOB.GEN" (the Slurm job name) and "sia:JOB:GEN" (its comment).
std::string slurm_job_name(const std::string& job, int generation);
std::string slurm_job_comment(const std::string& job, int generation);
struct SlurmMark {
  std::string job;
  int generation = 0;
};
// The mark read back from a job name; nullopt when it is not one of sia's.
std::optional<SlurmMark> parse_slurm_job_name(const std::string& name);

// The Slurm GRES type of catalog GPU type `type`: the gres_types entry mapping to it,
// else the type itself.
std::string slurm_gres_type(const slurm::SlurmSettings& settings, const std::string& type);

// `launches`: one per node of the job, in the placement's node order, prepared for the
// same generation. `script` is where the batch script is stored (on shared storage, as the
// ranks re-enter it), `output` Slurm's output file of the batch script.
std::vector<std::string> sbatch_argv(const slurm::SlurmSettings& settings,
                                     const std::vector<exec::JobLaunch>& launches,
                                     const std::string& script, const std::string& output);
std::string slurm_batch_script(const std::vector<exec::JobLaunch>& launches,
                               const std::string& gres_type, const std::string& script,
                               const std::string& exit_file);

// 'text' quoted for a POSIX shell.
std::string shell_quoted(const std::string& text);

}  // namespace sia::ctl
