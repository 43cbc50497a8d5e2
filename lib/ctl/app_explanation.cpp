#include "ctl/app_explanation.hpp"

#include <algorithm>
#include <cmath>

#include "cli/table.hpp"
#include "core/app_spec.hpp"
#include "core/error.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

// "successive-halving (eta 2, 3 phases)", "hyperband (eta 3, 4 brackets)", "none".
std::string scheduler_text(const AppSpec& spec) {
  const AppScheduler& s = spec.scheduler;
  switch (s.kind) {
    case AppSchedulerKind::successive_halving:
      return std::string(to_string(s.kind)) + " (eta " + std::to_string(s.eta) + ", " +
             std::to_string(s.rungs) + " phases)";
    case AppSchedulerKind::hyperband:
      return std::string(to_string(s.kind)) + " (eta " + std::to_string(s.eta) + ", " +
             std::to_string(s.rungs) + " brackets)";
    case AppSchedulerKind::none:
      break;
  }
  return "none (every trial trains to the end)";
}

// "1/4" for a budget fraction eta^-k, else the fraction's decimals.
std::string budget_text(double f) {
  if (f >= 1.0) return "the full training";
  const double inverse = 1.0 / f;
  if (std::abs(inverse - std::round(inverse)) < 1e-9) {
    return "1/" + std::to_string(static_cast<long long>(std::round(inverse))) +
           " of the full training";
  }
  return cli::fixed(f, 3) + " of the full training";
}

}  // namespace

json app_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                     const std::string& name, double now) {
  const BookApp* a = book.find_app(name);
  const PendingRequest* request = nullptr;
  const PendingApp* waiting = a ? nullptr : find_pending_app(pending, name, &request);
  if (!a && !waiting) throw Error(ExitStatus::no_input, "\"" + name + "\" is not an app");
  BookApp inbox;  // an app still in the inbox, as the book would hold it
  if (waiting) {
    inbox.spec = waiting->spec;
    inbox.identity = request->identity;
    inbox.submit_time = request->time;
    inbox.trials = waiting->trials;
    inbox.init_brackets();
  }
  const BookApp& app = a ? *a : inbox;
  json data = waiting ? pending_app_row(book, *request, *waiting) : app_row(book, app);
  data.erase("name");
  data["app"] = name;
  data["round"] = book.round();
  data["rungs"] = app.spec.scheduler.rungs;
  json trials = json::array();
  for (std::size_t i = 0; i < app.trials.size(); ++i) {
    const std::string& t = app.trials[i];
    const BookJob* b = book.find(t);
    json row = {{"name", t},
                {"bracket", app.bracket_of(t)},
                {"state", b         ? to_string(b->state)
                          : waiting ? "submitted"
                                    : "forgotten"},
                {"hparams", b         ? hparams_json(b->spec.hparams)
                            : waiting ? waiting->hparams[i]
                                      : json::object()},
                {"metric", nullptr},
                {"step", b ? b->step : 0},
                {"fraction", b ? b->fraction : 0.0},
                {"reason", b ? b->reason : ""}};
    if (b) {
      if (auto m = latest_metric(*b, app.spec.metric)) row["metric"] = *m;
      if (!is_ended(b->state) && book.at_rung(*b)) {
        row["reason"] = "at its rung: waits for the app's other trials";
      } else if (!is_ended(b->state)) {
        row["reason"] = b->placed ? "training" : "waiting for GPUs";
      }
    }
    trials.push_back(std::move(row));
  }
  data["trials"] = trials;

  json lines = json::array();
  lines.push_back("submitted by " + app.identity + " " +
                  cli::duration(std::max(0.0, now - app.submit_time)) + " ago, " +
                  std::to_string(app.trials.size()) + " trials; scheduler " +
                  scheduler_text(app.spec));
  lines.push_back("ranked on " + app.spec.metric + " (" + (app.spec.minimize ? "lower" : "higher") +
                  " is better)");
  if (app.spec.scheduler.kind != AppSchedulerKind::none && !waiting) {
    for (std::size_t k = 0; k < app.phases.size(); ++k) {
      const int b = static_cast<int>(k);
      const AppScheduler s = bracket_scheduler(app.spec.scheduler, b);
      const int phase = app.phase(b);
      const bool done = phase >= s.rungs;
      lines.push_back((app.phases.size() > 1 ? "bracket " + std::to_string(b + 1) + " of " +
                                                   std::to_string(app.phases.size()) + ": "
                                             : std::string()) +
                      (done ? "every phase closed"
                            : "phase " + std::to_string(phase + 1) + " of " +
                                  std::to_string(s.rungs) + ": its trials train to " +
                                  budget_text(rung_fraction(s, phase))));
    }
  }
  if (data.value("best", json()).is_number()) {
    const std::string best = data["best_trial"].get<std::string>();
    std::string values;
    for (const auto& t : trials) {
      if (t["name"] == best) values = hparams_text(t["hparams"]);
    }
    lines.push_back("best " + app.spec.metric + " so far " +
                    cli::fixed(data["best"].get<double>(), 4) + ": " + best +
                    (values.empty() ? "" : " (" + values + ")"));
  }
  data["lines"] = lines;
  return envelope("AppExplanation", data);
}

std::string app_explanation_text(const json& d) {
  std::string out = "app " + d.value("app", std::string("?")) + ": " +
                    d.value("state", std::string("?")) + " (after round " +
                    std::to_string(d.value("round", 0)) + ")\n";
  for (const auto& l : d.value("lines", json::array())) out += "  " + l.get<std::string>() + "\n";
  const std::string metric = d.value("metric", std::string("metric"));
  cli::Table t({"trial", "hparams", "state", metric, "step", "reason"});
  for (const auto& x : d.value("trials", json::array())) {
    const std::string values = hparams_text(x.value("hparams", json::object()));
    const json m = x.value("metric", json());
    const std::string reason = x.value("reason", std::string());
    t.add({x.value("name", std::string()), values.empty() ? "-" : values,
           x.value("state", std::string()), m.is_number() ? cli::fixed(m.get<double>(), 4) : "-",
           std::to_string(x.value("step", 0)), reason.empty() ? "-" : reason});
  }
  return out + t.render();
}

}  // namespace sia::ctl
