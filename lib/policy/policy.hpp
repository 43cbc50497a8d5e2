// Policies: every scheduling policy turns one round's GoodputMatrix (plus the previous
// round's Allocation) into an Allocation. sia-solve --policy NAME and the simulator pick
// one by name; baselines plug in behind the same interface and keep whatever state they
// need between rounds inside the object (and in Allocation::policy_state for the
// one-shot CLI, which feeds it back through --previous).
// Thread-safety: a Policy object is used by one thread at a time.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/allocation.hpp"
#include "core/goodput_matrix.hpp"
#include "policy/policy_quirks.hpp"
#include "policy/solve_limits.hpp"

namespace sia {

struct PolicyOptions {
  double p = -0.5;        // fairness power (p < 0: minimise sum of goodput^p)
  double lambda_n = 1.1;  // value of leaving a job unallocated
  double lambda_a = 0;    // penalty per changed allocation entry
  // Sia+ (the default profile's; ignored with quirks.sia_without_plus): a configuration other than
  // the job's current one is offered only if its goodput per GPU is at least this fraction of the
  // best goodput per GPU the job's row offers on that GPU type (0: any). Keeps GPUs away from jobs
  // that would turn them into little progress (GPU hours per job).
  double min_efficiency = 0.33;
  // Sia+: the current configuration's goodput counts (1 + hysteresis) times in the
  // objective, so a move must gain more than that to be worth it (0: none).
  double hysteresis = 0;
  // Sia+: a job's values are weighted by its priority max(1 / (1 + W / remaining_scale),
  // min(1, remaining_floor + age / remaining_aging)), where W is its estimated GPU-seconds
  // of work left at its efficiency so far (attained service x left / done; weight 1 while
  // unknown), so little work left is served first and large jobs are not starved: never
  // below the floor, and back to full weight as they age (SiaPolicy::priority).
  // remaining_scale 0: no weighting; remaining_aging 0: no ageing.
  double remaining_scale = 28800;  // GPU-seconds (8 GPU-hours)
  double remaining_floor = 0.5;
  double remaining_aging = 64800;  // seconds (18 hours)
  // Sia+: each configuration's value is lowered by this much per GPU, so a GPU goes where
  // it adds more than its price (GPU hours per job; 0: none).
  double gpu_price = 0.0005;
  // Sia+: the restart factor also counts the job's estimated seconds left T (age x left /
  // done, when its progress is known): min(r_j, max(T - restarts x S_j, 0) / (T + S_j)).
  // Age alone prices a restart as if the job had as long to go as it has run; near its end
  // a job would lose more to the restart than the new configuration gains back.
  bool restart_remaining = true;
  double time_limit = 2.0;  // seconds for the solver (a safety net; see wall_clock)
  double mip_gap = 1e-4;
  // Work limits of the solves (policy/solve_limits.hpp), 0: none. Simplex iterations per
  // LP solve; branch-and-bound nodes per MIP solve. On an ordinary machine they bind before
  // time_limit, so the answer depends on the input only.
  int iteration_limit = 100000;
  int node_limit = 200;
  // false (the simulator, always): no wall-clock limit at all; the work limits alone bound
  // a solve, and a run gives the same bytes on an idle machine and on a saturated one.
  bool wall_clock = true;
  bool explain = false;
  PolicyQuirks quirks;   // the published artifact's (policy_quirks(Compat::reference))
  bool use_glpk = true;  // false: no GLPK (the Lagrangian step, the exact programme, repairs)
  double round = 0;      // round length in seconds; 0: the policy's default
  unsigned seed = 1;     // randomised policies (Pollux's search, Themis' tie-breaks)
  // Gavel: reset the time-sharing counters at most this often (s); 0: never (the artifact).
  double gavel_reset = 0;
  // Pollux: genetic search.
  int pollux_population = 100;
  int pollux_generations = 100;
  double pollux_p = -1;
  // Themis: the fairness knob (fraction of jobs NOT offered resources) and the lease.
  double themis_f = 0.8;
  double themis_lease = 600;
};

// Checks the knobs (each row's range in policy/knobs.hpp, p != 0, sign(lambda_n) != sign(p),
// |lambda_n| > 1); throws Error(usage) naming the flag. make_policy calls it for every policy.
void validate_policy_options(const PolicyOptions& options);

// The limits a policy's solves run under: time_limit when wall_clock (else none), and the
// work limits.
SolveLimits solve_limits(const PolicyOptions& options);

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // `previous` is the last round's allocation, when known.
  virtual Allocation allocate(const GoodputMatrix& matrix,
                              const std::optional<Allocation>& previous) = 0;
};

// One row per policy: everything the programs know about a policy, in one place. The
// rounds are the ones each policy was evaluated with (Sia, Pollux, FIFO, SRTF: 60 s;
// Gavel, Themis, the finish-time-fair LP: 360 s; the deadline baselines edf and
// elasticflow: 60 s).
struct PolicyInfo {
  const char* name;
  double default_round;  // seconds
  // Runs jobs at their tuned fixed GPU count and batch ("+TJ" in the Sia paper): the
  // simulator treats their jobs as rigid.
  bool tuned_jobs;
  // Under --compat reference the simulator shows the policy the true throughput of each
  // tuned configuration instead of its estimate, as the published simulator's Gavel reads
  // its throughputs from the measured tables (Subramanya et al., SOSP '23, artifact).
  bool reference_true_rates;
  std::unique_ptr<Policy> (*make)(const PolicyOptions& options);  // options validated
};

// The table, in the order help texts and messages list it: sia, gavel, pollux, themis,
// ftf-lp, fifo, srtf, edf, elasticflow.
const std::vector<PolicyInfo>& policy_table();
// The row named `name`; nullptr for an unknown name.
const PolicyInfo* find_policy(const std::string& name);
// The table's names, in order.
std::vector<std::string> policy_names();
// The names as help texts and messages list them: "sia, gavel, ..., srtf".
std::string policy_list();
// The row's round (60 s for an unknown name).
double default_round(const std::string& policy);
// The row's tuned_jobs (false for an unknown name).
bool uses_tuned_jobs(const std::string& policy);
// The row's reference_true_rates (false for an unknown name).
bool reads_true_rates(const std::string& policy);
// Checks the round and the knobs; throws Error(usage) for an unknown name.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyOptions& options);

}  // namespace sia
