// Finish-time fairness of one round's jobs and apps, estimated from the round's goodput
// matrix (Themis, Mahajan et al., NSDI '20, with Sia's Eq. 6 over GPU types): what the
// controller shows live, where no job can be run alone to measure its ideal time (the
// simulator measures that by simulating the isolated runs: sim/fairness.hpp).
//   rho = T_sh / T_id; rho > 1: the job (app) would finish sooner alone on its fair share.
//   T_id: alone on its fair share, each type's GPUs over its N_avg, as the Themis policy
//     computes it (themis_model.hpp: themis_ideal_time); an app's: its whole
//     successive-halving (or hyperband) schedule alone on min(cluster GPUs / N_avg, its
//     largest demand) (themis_app.hpp).
//   T_sh: seconds from its submission to its estimated finish: its age plus its remaining
//     work at the rate of the GPUs it was given this round (plus the row's restart penalty
//     when they are not the ones it runs on); given none, as if it waited `wait` seconds
//     (one round) and then ran on its fastest gang (Themis' rho_old with a lease of one
//     round). An app's: its trials' GPUs together, as one unit.
//   N_avg: the caller's -- the mean number of units (apps; a job without an app is one)
//     over the rounds the job or app was scheduled, this round included.
// Measured (`measured`: the job's rate of progress, per second, on the configuration it
//   runs on, row.current, from its own reports): the model's rates are scaled by the
//   measured rate over the model's rate there, so T_id and T_sh rest on the work the job
//   really does per second, not on the catalog's model of it (FairnessFigure::measured;
//   an app's when every trial's is).
// Progress is in iterations at the initial batch (row.progress). A job without progress
// information, that fits nowhere or whose estimate is not finite has no figure; an app has
// one when its trials do.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>

#include "core/configuration.hpp"
#include "core/goodput_matrix.hpp"

namespace sia {

struct FairnessFigure {
  double t_sh = 0;        // seconds from submission to the estimated finish (> 0, finite)
  double t_id = 0;        // seconds alone on the fair share (> 0, finite)
  bool measured = false;  // rates from the job's measured throughput, not the model alone
  double rho() const { return t_sh / t_id; }
};

struct FairnessEstimate {
  std::map<std::string, FairnessFigure> jobs;  // by job name
  std::map<std::string, FairnessFigure> apps;  // by app name
};

// The units that contend in the matrix: its apps, and its jobs without an app.
int fairness_units(const GoodputMatrix& m);

// `given`: the configuration each job got this round (absent: none); `n_avg`: by job name,
// and by app name for apps (each at least 1; a missing one counts as 1); `measured`: by
// job name, its measured rate of progress on row.current (absent or not > 0: none).
FairnessEstimate estimate_fairness(const GoodputMatrix& m,
                                   const std::map<std::string, Config>& given,
                                   const std::map<std::string, double>& job_n_avg,
                                   const std::map<std::string, double>& app_n_avg, double wait,
                                   const std::map<std::string, double>& measured = {});

}  // namespace sia
