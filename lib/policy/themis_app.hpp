// Finish-time fairness of a multi-job app (Themis, Mahajan et al., NSDI '20, §4.3.2): a
// hyper-parameter search run with successive halving (or hyperband) bids as one unit with one rho.
// Which trials will survive is unknown, so the time of future work is estimated with the median
// iteration time of the app's current trials; the app's remaining time is the current
// phase's work (packed in waves of the trials the allocation runs at once, and no shorter
// than its longest trial) plus every later phase's, and its ideal time is the whole
// schedule alone on its fair share min(cluster GPUs / N_avg, the app's largest demand).
// Iteration times scale linearly with a trial's GPUs (Themis' model without placement).
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "core/goodput_matrix.hpp"

namespace sia {

// One successive-halving schedule: the app's, or one bracket of a hyperband app's.
struct ThemisPhases {
  std::vector<int> phase_jobs;       // n_k: trials in phase k
  std::vector<double> phase_budget;  // r_k: a trial's cumulative iterations at phase k's end
  int phase = 0;                     // k*: the current phase
  std::vector<double> done;          // iterations done by each trial of phase k*
};

// The app: its (first bracket's) schedule, and for hyperband (Li et al., JMLR 2018) its
// other brackets, which run at the same time on the same GPUs: their current phases' work
// is packed together (the waves of all the brackets' trials, no shorter than the longest),
// and their later phases follow one bracket after another -- with one bracket the estimate
// is successive halving's.
struct ThemisApp : ThemisPhases {
  std::vector<ThemisPhases> more_brackets;
  std::vector<double> serial_iter;  // one-GPU iteration time (s) of each current trial
  int gpus_per_trial = 1;           // d
  double elapsed = 0;               // seconds since the app arrived
};

// One trial of an app as its model sees it: its bracket's successive halving (AppRef),
// its progress (iterations at the initial batch), age, and its fastest gang.
struct ThemisTrial {
  AppRef ref;
  double done = 0, total = 0;
  double age = 0;   // seconds since it was submitted
  int gpus = 1;     // its fastest gang's GPUs
  double rate = 0;  // that gang's iterations per second (> 0)
};

// The app's model from its trials now being scheduled (at least one): each bracket's
// phases from its AppRef, with phase budgets the rung fractions of the trials' median
// total; elapsed the oldest trial's age; gpus_per_trial the first trial's gang. The sum of
// the brackets' starting trials goes to *trials when given.
ThemisApp themis_app_model(const std::vector<ThemisTrial>& trials, int* started = nullptr);

// Seconds the app still needs holding `gpus` GPUs (infinite below one trial's GPUs).
double themis_app_remaining(const ThemisApp& app, int gpus);
// T_sh(G) = elapsed + remaining(G).
double themis_app_shared_time(const ThemisApp& app, int gpus);
// T_id: the whole schedule on min(cluster_gpus / n_avg, max_demand) GPUs.
double themis_app_ideal_time(const ThemisApp& app, double cluster_gpus, double n_avg,
                             int max_demand);
// rho(G) = T_sh(G) / T_id.
double themis_app_rho(const ThemisApp& app, int gpus, double cluster_gpus, double n_avg,
                      int max_demand);

}  // namespace sia
