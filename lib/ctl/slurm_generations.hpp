// The Slurm jobs of a job's generations, as the Slurm driver (slurm_driver.hpp) submitted
// or adopted them: STATE/slurm/generations/JOB.json (sia-formats(5), "Slurm generations"),
//   {"job": NAME, "generations": [{"generation": G, "slurm_job": ID, "node": FIRST}]}
// sorted by generation, one entry per generation (recording one again replaces it).
// Unlike the driver's record of the current generation (STATE/slurm/JOB.json), it is kept
// after the job ended, for `sia-ctl history` (slurm_history.hpp) and `sia-ctl logs`
// (the first node of the last generation holds the rank logs on shared storage), until the
// book forgets the job (controller.history_days): both files go then.
// The files are the controller's own (its state directory): written atomically.
// Thread-safety: functions over files; one writer (the round, under the state lock).
#pragma once

#include <string>
#include <vector>

namespace sia::ctl {

struct SlurmGeneration {
  long generation = 0;
  long slurm_job = 0;
  std::string node;  // the first node: rank 0's
  bool operator==(const SlurmGeneration&) const = default;
};

void record_slurm_generation(const std::string& state_dir, const std::string& job,
                             const SlurmGeneration& g);
// The job's generations, oldest first; none when the file is missing. A file that is not
// this format is refused: Error(data) naming it and the field.
std::vector<SlurmGeneration> read_slurm_generations(const std::string& state_dir,
                                                    const std::string& job);
// Removes the job's file (when the book forgot the job); none is no error.
void forget_slurm_generations(const std::string& state_dir, const std::string& job);

}  // namespace sia::ctl
