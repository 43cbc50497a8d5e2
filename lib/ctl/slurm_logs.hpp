// `sia-ctl logs` when the rounds run through Slurm ([slurm] enabled): a rank's log read
// straight from the shared storage the ranks write to -- SHARED/nodes/FIRST/jobs/JOB/logs/
// rank-N.log, FIRST the first node of the job's last generation (slurm_generations.hpp) --
// with no agent and no [nodes] command in between. The JobLog document is the one agents
// give (job_log.hpp), with run_state null (no sia-run watches the ranks: the round says how
// they ended) and two fields more: slurm_job (the last generation's Slurm job id) and
// slurm_output (Slurm's output file of its batch script, SHARED/slurm/JOB/slurm-ID.out).
// Refusals as locate_rank_log's (66, 64); 66 for a job with no Slurm generation recorded.
// Slurm is never asked: the path is sia's own record, so a node the last round found down
// (slurmctld unreachable) is no refusal -- the log is read all the same, with one field
// more, note ("the last round found NODE down (REASON): Slurm was not asked; read from
// shared storage"). The log is opened by exec/rank_log.hpp's rule (a link or FIFO in its
// place is refused, status 77).
// Thread-safety: pure over files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/job_log.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::ctl {

nlohmann::json slurm_job_log(const JobBook& book, const std::vector<PendingRequest>& pending,
                             const LogQuery& query, const slurm::SlurmSettings& settings,
                             const std::string& state_dir);

}  // namespace sia::ctl
