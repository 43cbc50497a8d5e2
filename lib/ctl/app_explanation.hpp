// AppExplanation: what `sia-ctl explain APP` prints of a hyper-parameter search (an app,
// core/app_spec.hpp) -- its scheduler and where it is, the metric its trials are ranked on,
// and every trial with its hyper-parameter values, its metric and why it stopped:
//   {app, state, round, identity, submitted, scheduler, eta, phase, phases, brackets,
//    metric, direction, best, best_trial, trials: [{name, state, hparams, bracket, metric,
//    step, fraction, reason}], lines: [...]}
// state, phase, brackets, best are as the app's row of a JobStatusList says them; a trial's
// metric is its latest reported one (null before any), its reason why it ended or waits.
// An app still in the inbox has state "submitted" and its trials state "submitted".
// Thread-safety: pure.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/client_docs.hpp"
#include "ctl/job_book.hpp"

namespace sia::ctl {

// Status 66 for a name that is no app, neither known nor pending.
nlohmann::json app_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                               const std::string& app, double now);

// The AppExplanation's text for people: its lines, then a table of its trials.
std::string app_explanation_text(const nlohmann::json& data);

}  // namespace sia::ctl
