// How sia marks the Slurm jobs it submits, said once: the comment "sia:JOB:GENERATION:TOKEN"
// (sbatch --comment) and the job name "sia.JOB.GENERATION" (sbatch --job-name), JOB a sia
// job name, GENERATION a non-negative integer (the job's restart count), TOKEN a secret of
// this one submission (random, drawn when its record is written before sbatch: a mark can
// no longer be guessed ahead of it). Marks of versions before the token have none
// ("sia:JOB:GENERATION"). The mark alone makes no job sia's (anyone may write it): a Slurm
// job is sia's only when it also has the id and user sia recorded when it submitted it
// (slurm_cluster.hpp, owns()); sia never touches (counts, signals or cancels) any other
// job.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sia::slurm {

struct JobMark {
  std::string job;
  long generation = 0;
  std::string token{};  // empty: none (a mark of an older version)
  bool operator==(const JobMark&) const = default;
};

inline constexpr std::size_t kMarkTokenLength = 16;  // what sia draws ([a-z0-9])
inline constexpr std::size_t kMaxMarkToken = 64;     // what a mark may carry

std::string mark_comment(const JobMark& mark);   // sia:JOB:GEN[:TOKEN]
std::string mark_job_name(const JobMark& mark);  // sia.JOB.GEN
// The mark in a comment, or nullopt (another job's comment, or a malformed mark: a token is
// 1 to kMaxMarkToken of [a-z0-9]).
std::optional<JobMark> parse_mark_comment(std::string_view comment);

}  // namespace sia::slurm
