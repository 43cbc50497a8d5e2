// The Sia policy (SOSP '23 §3.4): one ILP per round over the goodput matrix.
//   goodput'  = goodput x r_j off the job's current configuration, where the restart factor
//               r_j = max(age - restarts * S_j, 0) / (age + S_j) (1 while age < S_j) charges
//               a move for the checkpoint-restore it costs (S_j = restart penalty);
//   value     = sign(p) * (goodput'^p - lambda_n) - lambda_a * (1 - 2 [current]);
//   maximise the sum of values, at most one configuration per job, GPUs of each type (and
//   size class, for virtual nodes) within capacity, jobs inside a checkpoint-restore and
//   running non-preemptible jobs pinned to their configuration.
// With p < 0 this is the paper's "minimise sum goodput^p + lambda_n * unallocated"; p
// trades efficiency (p -> 1) for fairness (p -> -inf). Entries with goodput' = 0 are
// dropped (the artifact gives them a clipped cost of 3000 instead; PolicyQuirks::sia_clipped_cost
// does that, and rounds goodput^p to two decimals as it does). Sia+ knobs (PolicyOptions; ignored
// with PolicyQuirks::sia_without_plus): min_efficiency drops configurations whose goodput per GPU
// falls below that fraction of the row's best on the type; hysteresis multiplies the current
// configuration's goodput by 1 + h; remaining_scale multiplies a job's values by its priority
// (below); gpu_price lowers each configuration's value by the price times its GPUs;
// restart_remaining charges a move against the seconds left too: r_j = min(r_j, max(T - restarts *
// S_j, 0) / (T + S_j)) with T = age x left / done, so a job near its end moves only for a large
// gain. Ties are broken deterministically: keep the current configuration, then fewer GPUs, then
// GPU type order. Solved by solve_mckp (Lagrangian heuristic, GLPK branch and cut).
// Thread-safety: as Policy.
#pragma once

#include <optional>

#include "policy/mckp.hpp"
#include "policy/policy.hpp"

namespace sia {

class SiaPolicy : public Policy {
 public:
  explicit SiaPolicy(PolicyOptions options) : options_(options) {}
  std::string name() const override { return "sia"; }
  Allocation allocate(const GoodputMatrix& matrix,
                      const std::optional<Allocation>& previous) override;

  // The restart factor of a row (exposed for tests and explanations); with `remaining`
  // (PolicyOptions::restart_remaining) also charged against the job's seconds left.
  static double restart_factor(const GoodputRow& row, bool remaining = false);
  // A job's estimated seconds left at its rate so far, age x left / done (absent when its
  // progress is unknown or nothing is done yet).
  static std::optional<double> seconds_left(const GoodputRow& row);
  // A job's priority weight (PolicyOptions::remaining_scale), in [0.001, 1]: with W its
  // estimated GPU-seconds left (attained service x left / done), max(1 / (1 + W / scale),
  // min(1, floor + age / aging), 0.001); 1 without weighting, with quirks.sia_without_plus, or
  // while W is unknown (no progress known, or none made yet). The GPU price of a configuration is
  // at most 0.99 x (|lambda_n| - 1) x priority, under the least value any configuration of the job
  // has, so no job prefers waiting beside idle GPUs.
  static double priority(const GoodputRow& row, const PolicyOptions& options);

  // Runtime of the last allocate() call's solver, seconds (benchmarks, the simulator).
  double last_solve_seconds() const { return last_seconds_; }
  const MckpSolution& last_solution() const { return last_; }

 private:
  PolicyOptions options_;
  double last_seconds_ = 0;
  MckpSolution last_;
};

}  // namespace sia
