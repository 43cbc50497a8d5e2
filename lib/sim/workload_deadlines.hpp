// Deadlines and service classes in the simulator's workloads (issue 34, sia-formats(5)):
// a job row may carry `deadline`, in seconds after the trace's start (the clock of its
// submission time; it must come after the submission), and `class`, guaranteed or
// best_effort (the default). A guaranteed job needs a deadline; a best-effort job's
// deadline is a wish that is only measured. CSV: two optional columns (an empty cell:
// unset). JSON Lines: two keys of a JobSpec document, read by parse_job_spec as the
// controller reads them (a duration, "36h", counts from the job's submit_time; a UTC date
// is out of a trace's range) and checked here against the trace's clock.
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
// fixed and checked on the trace's clock.
JobSpec parse_sim_job_spec(const Node& data);

// The class named `word` (guaranteed | best_effort); nullopt for any other word.
std::optional<JobClass> job_class_named(const std::string& word);

}  // namespace sia
