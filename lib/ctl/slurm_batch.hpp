// Slurm batches: how one generation of a job becomes one Slurm job (sbatch) -- the
// submission's argv and the batch script it runs, both pure functions of the job's node
// launches (exec/node_plan.hpp: plan_node then prepare_generation, as sia-run builds them,
// so the ranks get the worker contract's environment of sia-worker(7) unchanged).
//   - the Slurm job is on exactly the job's nodes: --nodelist, --nodes, and per node
//     --gres=gpu:TYPE:N with N tasks; nodes holding different GPU counts make a
//     heterogeneous job, one component per node (srun --het-group);
//   - its mark (slurm/job_mark.hpp), job name and comment, on every component, by which a
//     restarted controller finds (adopts) it in Slurm's job list;
//   - the script runs one srun per node, each starting that node's ranks; every task
//     re-enters the script ("rank" mode), picks its rank by SLURMD_NODENAME and
//     SLURM_LOCALID, exports that rank's variables (CUDA_VISIBLE_DEVICES is Slurm's: it
//     binds the GPUs) and runs the job's command in its working directory, output
//     appended to the rank's log, waits for it and appends "NODE/LOCALID STATUS" to
//     EXIT_FILE.ranks. The script exits with the first failing step's status -- the first
//     status one of its ranks recorded that is neither 0 nor 75, as srun's own (the
//     highest) would let a 75 beside a failure hide it -- and writes that status to
//     EXIT_FILE first (atomically), so the controller learns how the generation ended
//     without Slurm accounting;
//   - the stop protocol: SIGTERM to the batch script (`scancel --batch --signal=TERM`)
//     starts no step that has not started, forwards TERM to every rank (SCANCEL
//     --signal=TERM of its own job, which signals the steps, not the script) every second
//     until the steps end -- a rank still starting at the first TERM gets a later one --
//     and ends 75 only when every rank ended 75 or by that TERM (143, or killed before it
//     recorded anything: TERM before its handler); a rank that recorded another status is
//     the job's failure, with that status. TERM to srun itself would kill its ranks at
//     once, so the script never signals srun;
//   - every rank appends "NODE/LOCALID" to EXIT_FILE.ranks as it starts: a step that
//     failed without starting any rank there (srun could not create it: slurmctld down)
//     ran nothing and counts as stopped (75), to be started again, not as the job failing.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "exec/job_launch.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::ctl {

// The Slurm GRES type of catalog GPU type `type`: the gres_types entry mapping to it,
// else the type itself.
std::string slurm_gres_type(const slurm::SlurmSettings& settings, const std::string& type);

// `launches`: one per node of the job, in the placement's node order, prepared for the
// same generation. `scancel` is the scancel program the script forwards TERM with (on the
// nodes' PATH, or slurm.bin_dir's). `script` is where the batch script is stored (on shared
// storage, as the ranks re-enter it), `output` Slurm's output file of the batch script,
// `token` the submission's secret in its mark (slurm/job_mark.hpp; empty: none).
std::vector<std::string> sbatch_argv(const slurm::SlurmSettings& settings,
                                     const std::vector<exec::JobLaunch>& launches,
                                     const std::string& script, const std::string& output,
                                     const std::string& token);
std::string slurm_batch_script(const std::vector<exec::JobLaunch>& launches,
                               const std::string& gres_type, const std::string& script,
                               const std::string& exit_file, const std::string& scancel);

// 'text' quoted for a POSIX shell.
std::string shell_quoted(const std::string& text);

}  // namespace sia::ctl
