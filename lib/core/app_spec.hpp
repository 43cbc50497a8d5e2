// AppSpec: a hyper-parameter search submitted as one unit of fairness -- Themis' multi-job
// app (Mahajan et al., NSDI '20, §4.3.2): a name, a trial template (a JobSpec whose strings
// may hold placeholders), the hyper-parameter values (a grid, or a seeded sampler), the app
// scheduler that stops the worse trials (successive halving: Jamieson and Talwalkar,
// AISTATS '16; hyperband: Li et al., JMLR 2018), and the metric and direction trials are ranked on.
// An App document (in a simulation workload); expand_trials() turns it into the trials' JobSpecs,
// each carrying the app's name and its own hyper-parameter values. Thread-safety: plain values; the
// functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec.hpp"
#include "core/node.hpp"

namespace sia {

enum class AppSchedulerKind { none, successive_halving, hyperband };

const char* to_string(AppSchedulerKind k);

// Successive halving in `rungs` phases: phase k (0-based) trains its trials to
// eta^-(rungs-1-k) of the full budget, then keeps the best ceil(n_k / eta) of them; the
// last phase trains the survivors to the end. `none` runs every trial to the end.
struct AppScheduler {
  AppSchedulerKind kind = AppSchedulerKind::none;
  int eta = 2;
  int rungs = 3;
};

inline constexpr int kMaxAppTrials = 10000;

struct HparamRange {
  std::string name;
  double min = 0, max = 0;
  bool log = false;  // log-uniform (both bounds > 0)
};

struct AppSpec {
  std::string name;
  double submit_time = 0;  // seconds from the start of a workload (simulation)
  AppScheduler scheduler;
  std::string metric = "loss";                   // the report field trials are ranked on
  bool minimize = true;                          // direction: min (a loss) or max (an accuracy)
  std::optional<nlohmann::json> trial_template;  // JobSpec data with placeholders
  // Values: a grid (every combination, in key order) or `samples` draws from `ranges`.
  std::vector<std::pair<std::string, std::vector<double>>> grid;
  int samples = 0;
  std::uint64_t seed = 0;
  std::vector<HparamRange> ranges;
};

// A hyper-parameter value as placeholders write it, and status shows it (%.6g: "0.001").
std::string hparam_text(double v);

// Validates an App (the data part of an App document); every mistake is reported at once,
// one a line.
AppSpec parse_app_spec(const Node& data);
nlohmann::json app_spec_to_json(const AppSpec& app);

// The app's trials, named APP-000, APP-001, ... (or the template's name with its
// placeholders filled): in every string of the template, {app} becomes the app's name,
// {trial} the trial's index and {NAME} the value of hyper-parameter NAME. Errors (a bad
// template, an unknown placeholder) name `file` and the field.
std::vector<JobSpec> expand_trials(const AppSpec& app, const std::string& file);

// The fraction of its full budget a trial trains to in phase `k` of successive halving (of
// hyperband's first bracket, for hyperband).
double rung_fraction(const AppScheduler& s, int k);

// The app's brackets: `rungs` for hyperband, else 1.
int app_brackets(const AppScheduler& s);
// Bracket `b`'s scheduler: for hyperband successive halving in rungs - b phases with the
// same eta; otherwise `s` itself.
AppScheduler bracket_scheduler(const AppScheduler& s, int b);
// Each of `trials` trials' bracket, by trial index (all 0 unless hyperband). Hyperband's
// rule: bracket b (s = rungs - 1 - b) weighs w_b = ceil(rungs / (s + 1) * eta^s), Hyperband's
// n_s; the bracket sizes are the largest-remainder shares of the trials in proportion to
// the weights (ties to the lower bracket), then, when there are at least as many trials as
// brackets, every empty bracket takes one trial from the largest (the lowest of equals);
// trial i goes to the bracket furthest behind its share, size_b * (i + 1) / trials -
// assigned_b (ties to the lower bracket), so that the brackets interleave over the trials.
std::vector<int> hyperband_brackets(const AppScheduler& s, int trials);

}  // namespace sia
