#include "sim/workload_deadlines.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace sia {

namespace {

constexpr const char* kClassWords = "guaranteed or best_effort";

// The check both formats share: "" when the fields agree, else what is wrong and which
// field it is about (true: the deadline's, false: the class's).
std::pair<std::string, bool> deadline_problem(const JobSpec& s) {
  if (s.deadline) {
    const double d = *s.deadline;
    if (!(d > s.submit_time && d <= kMaxSeconds)) {
      char msg[160];
      std::snprintf(msg, sizeof msg,
                    "expected seconds after the trace's start, after the submission (%g) and "
                    "at most 1e9, got %g",
                    s.submit_time, d);
      return {msg, true};
    }
  } else if (s.job_class == JobClass::guaranteed) {
    return {"a guaranteed job needs a deadline", false};
  }
  return {"", false};
}

}  // namespace

std::optional<JobClass> job_class_named(const std::string& word) {
  if (word == "guaranteed") return JobClass::guaranteed;
  if (word == "best_effort") return JobClass::best_effort;
  return std::nullopt;
}

DeadlineColumns deadline_columns(const CsvTable& t) {
  DeadlineColumns c;
  if (t.has_column("deadline")) c.deadline = t.column("deadline");
  if (t.has_column("class")) c.job_class = t.column("class");
  return c;
}

void read_deadline_cells(const CsvTable& t, std::size_t r, const DeadlineColumns& c, JobSpec& s) {
  if (c.deadline >= 0 && !t.cell(r, c.deadline).empty()) s.deadline = t.number(r, c.deadline);
  if (c.job_class >= 0 && !t.cell(r, c.job_class).empty()) {
    const std::string& w = t.cell(r, c.job_class);
    const auto k = job_class_named(w);
    if (!k) t.fail(r, c.job_class, std::string("expected ") + kClassWords + ", got \"" + w + "\"");
    s.job_class = *k;
  }
  const auto [problem, about_deadline] = deadline_problem(s);
  if (problem.empty()) return;
  // A guaranteed job without a deadline is about its class (the class column says so).
  t.fail(r, about_deadline ? c.deadline : c.job_class, problem);
}

JobSpec parse_sim_job_spec(const Node& data) {
  JobSpec s = parse_job_spec(data);  // reads deadline and class, as the controller's reader
  fix_deadline(s, s.submit_time);    // a duration counts from the job's submission
  const auto [problem, about_deadline] = deadline_problem(s);
  if (!problem.empty()) data.at(about_deadline ? "deadline" : "class").fail(problem);
  return s;
}

}  // namespace sia
