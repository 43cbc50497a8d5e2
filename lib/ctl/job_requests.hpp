// The checks of a client's request -- a new submission's names; cancel, hold, release,
// requeue of named jobs -- made the same way by the local client backend and by the
// daemon's client service before anything is written: every job must be known or waiting
// in the inbox (status 66, none is acted on; cancel also takes an app's name, for all its
// trials, the app's also while it waits in the inbox), and a job that has ended can be
// cancelled (nothing happens) but not held, released or requeued (status 65, naming the
// job and its state). Thread-safety: pure.
#pragma once

#include <string>
#include <vector>

#include "ctl/client_docs.hpp"
#include "ctl/job_book.hpp"
#include "ctl/submission.hpp"

namespace sia::ctl {

// Status 65 when the book has (or had: a forgotten job's name is retired) a job or an app
// `name`: a name is never reused.
void check_name_unused(const JobBook& book, const std::string& name);

// A new submission's names -- its jobs' and apps' -- are free: check_name_unused for each,
// and status 65 "\"NAME\" is submitted already (waiting in the inbox)" for a job or app
// submitted in `pending` that no round has taken in yet.
void check_names_free(const JobBook& book, const std::vector<PendingRequest>& pending,
                      const Submission& submission);

void check_job_request(const JobBook& book, const std::vector<PendingRequest>& pending,
                       JobRequest request, const std::vector<std::string>& jobs);

}  // namespace sia::ctl
