// Slurm's side of `sia-ctl history` when the rounds run through Slurm ([slurm] enabled):
// each row of a JobHistory document (history.hpp) gets
//   "slurm": [{generation, slurm_job, state, elapsed, exit_code, exit_signal}]
// -- the Slurm job of each of its generations (slurm_generations.hpp) and sacct's figures
// of it (slurm/slurm_accounting.hpp: state, elapsed seconds, the batch script's exit status
// and ending signal; null where sacct has none) -- and the document's data gets
// "slurm_note": one line saying why there are no Slurm figures (no accounting storage,
// sacct failed), or null. sacct runs once, for every generation of every row.
// slurm_history_text() is that column as the history table shows it, one job's cell.
// Thread-safety: as its runner; one thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "slurm/command_runner.hpp"

namespace sia::ctl {

void add_slurm_history(nlohmann::json& history_doc, const std::string& state_dir,
                       slurm::CommandRunner& runner);

// "17 COMPLETED 1m05s exit 0, 19 RUNNING 12s" (or "17, 19" without figures); "-" for none.
std::string slurm_history_text(const nlohmann::json& slurm_generations);

}  // namespace sia::ctl
