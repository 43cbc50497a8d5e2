// Deadlines and service classes in the simulator's workloads (issue 34, sia-formats(5)):
// a job row may carry `deadline`, in seconds after the trace's start (the clock of its
// submission time; it must come after the submission), and `class`, guaranteed or
// best_effort (the default). A guaranteed job needs a deadline; a best-effort job's
// deadline is a wish that is only measured. CSV: two optional columns (an empty cell:
// unset). JSON Lines: two optional keys of a JobSpec document, read here before the rest
// of the spec (parse_job_spec does not know them; the controller's own forms, dates and
// durations, are its reader's).
// Bad input: one line naming the file, the row (or the document path) and the field; data
// error (65).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

#include "core/csv.hpp"
#include "core/job_spec.hpp"
#include "core/node.hpp"

namespace sia {

// The column indexes of a CSV workload's deadline fields (-1: absent).
struct DeadlineColumns {
  int deadline = -1;
  int job_class = -1;
};

DeadlineColumns deadline_columns(const CsvTable& t);
// Reads row `r`'s deadline fields into `s` (its submit_time already read) and checks them.
void read_deadline_cells(const CsvTable& t, std::size_t r, const DeadlineColumns& c, JobSpec& s);

// A JobSpec document of a simulator workload: the spec (parse_job_spec) with its deadline
// fields read and checked.
JobSpec parse_sim_job_spec(const Node& data);

// The class named `word` (guaranteed | best_effort); nullopt for any other word.
std::optional<JobClass> job_class_named(const std::string& word);

}  // namespace sia
