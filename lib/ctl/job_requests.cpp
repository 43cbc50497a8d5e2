#include "ctl/job_requests.hpp"

#include <set>

#include "core/error.hpp"
#include "core/error_list.hpp"

namespace sia::ctl {

void check_name_unused(const JobBook& book, const std::string& name) {
  if (const BookJob* b = book.find(name)) {
    throw Error(ExitStatus::data, "job \"" + name + "\" exists already (" + to_string(b->state) +
                                      "); a job name is never reused: choose another");
  }
  if (book.find_app(name)) {
    throw Error(ExitStatus::data, "\"" + name +
                                      "\" names an app already; a name is never reused: "
                                      "choose another");
  }
  if (book.retired(name)) {
    throw Error(ExitStatus::data, "job \"" + name +
                                      "\" existed (it ended and was forgotten after "
                                      "controller.history_days); a job name is never reused: "
                                      "choose another");
  }
}

void check_names_free(const JobBook& book, const std::vector<PendingRequest>& pending,
                      const Submission& submission) {
  const std::set<std::string> waiting = pending_submissions(pending);
  ErrorList errors;  // every name taken, at once
  auto check = [&](const std::string& name) {
    errors.check([&] {
      check_name_unused(book, name);
      if (waiting.count(name) || find_pending_app(pending, name)) {
        throw Error(ExitStatus::data,
                    "\"" + name + "\" is submitted already (waiting in the inbox)");
      }
    });
  };
  for (const auto& j : submission.jobs) check(j.name);
  for (const auto& a : submission.apps) check(a.name);
  errors.throw_if_any();
}

void check_job_request(const JobBook& book, const std::vector<PendingRequest>& pending,
                       JobRequest request, const std::vector<std::string>& jobs) {
  if (jobs.empty()) {
    throw Error(ExitStatus::usage, std::string(to_string(request)) + ": expected job names");
  }
  const std::set<std::string> waiting = pending_submissions(pending);
  for (const auto& name : jobs) {
    if (request == JobRequest::cancel && (book.find_app(name) || find_pending_app(pending, name))) {
      continue;  // its trials (an app in the inbox: the round takes in both, in order)
    }
    const BookJob* b = book.find(name);
    if (!b) {
      if (!waiting.count(name)) {
        throw Error(ExitStatus::no_input, "job \"" + name + "\" is not known to the controller");
      }
      continue;
    }
    if (request != JobRequest::cancel && is_ended(b->state)) {
      throw Error(ExitStatus::data, "job \"" + name + "\" has ended (" + to_string(b->state) +
                                        "): only a queued or running job can be " +
                                        past_tense(request));
    }
  }
}

}  // namespace sia::ctl
