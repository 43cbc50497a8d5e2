// How sia marks the Slurm jobs it submits, said once: the comment "sia:JOB:GENERATION"
// (sbatch --comment) and the job name "sia.JOB.GENERATION" (sbatch --job-name), JOB a sia
// job name, GENERATION a non-negative integer (the job's restart count). The mark alone
// makes no job sia's (anyone may write it): a Slurm job is sia's only when it also has the
// id and user sia recorded when it submitted it (slurm_cluster.hpp, owns()); sia never
// touches (counts, signals or cancels) any other job.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sia::slurm {

struct JobMark {
  std::string job;
  long generation = 0;
  bool operator==(const JobMark&) const = default;
};

std::string mark_comment(const JobMark& mark);   // sia:JOB:GEN
std::string mark_job_name(const JobMark& mark);  // sia.JOB.GEN
// The mark in a comment, or nullopt (another job's comment, or a malformed mark).
std::optional<JobMark> parse_mark_comment(std::string_view comment);

}  // namespace sia::slurm
