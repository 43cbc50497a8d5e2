// Successive halving as an app scheduler (Jamieson and Talwalkar, AISTATS '16; the app
// scheduler of Themis' multi-job apps, Mahajan et al., NSDI '20, §4.3.2): the app's trials
// train to the current phase's budget (core/app_spec.hpp: rung_fraction); when every trial
// still in the search has reached it, the best ceil(n / eta) on the app's metric go on to
// the next phase and the rest are stopped. The caller (the simulator, the controller)
// holds a trial that reached the budget until its phase closes. Hyperband (Li et al., JMLR
// 2018) is one SuccessiveHalving per bracket (bracket_halving), each closing its phases on
// its own trials (core/app_spec.hpp: hyperband_brackets).
// Thread-safety: a plain value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/app_spec.hpp"
#include "core/goodput_matrix.hpp"

namespace sia {

struct TrialProgress {
  std::string name;
  double fraction = 0;           // of the trial's full budget, 0..1
  std::optional<double> metric;  // the latest reported value, if any
};

struct HalvingStop {
  std::string name;
  std::string reason;  // "successive halving: phase 1 of 3, loss 0.42 ranked 3 of 4 (kept 2)"
};

class SuccessiveHalving;
// Bracket `b` of app `app` at `phase`: for hyperband, successive halving in the bracket's
// phases, its stop reasons saying "hyperband bracket B of N"; otherwise the app's scheduler.
SuccessiveHalving bracket_halving(const AppSpec& app, int b, int phase);
// A trial of app `name` in bracket `b` at `phase`, as the policies see it: for hyperband its
// bracket's trials (`bracket`: every trial's, hyperband_brackets), phases and phase.
AppRef bracket_ref(const std::string& name, const AppScheduler& s, const std::vector<int>& bracket,
                   int b, int phase);

class SuccessiveHalving {
 public:
  // `phase`: where a search resumes (the controller keeps it in its state). `label` begins
  // the stop reasons.
  SuccessiveHalving(AppScheduler scheduler, std::string metric, bool minimize, int phase = 0,
                    std::string label = "successive halving");

  int phase() const { return phase_; }
  int phases() const { return scheduler_.rungs; }
  int eta() const { return scheduler_.eta; }
  bool halving() const { return scheduler_.kind == AppSchedulerKind::successive_halving; }
  // The fraction of its budget a trial trains to in the current phase (1: to the end).
  double budget() const { return rung_fraction(scheduler_, phase_); }
  bool reached(const TrialProgress& t) const;

  // Given the trials still in the search (neither finished nor stopped): when every one has
  // reached the phase's budget, ranks them (a trial without a metric ranks last; ties by
  // name) and returns the ones to stop; the phase advances. Otherwise returns nothing.
  std::vector<HalvingStop> close_phase(const std::vector<TrialProgress>& survivors);

 private:
  AppScheduler scheduler_;
  std::string metric_;
  bool minimize_;
  int phase_ = 0;
  std::string label_;
};

}  // namespace sia
