// Shared by the baselines of gavel.cpp (gavel, ftf-lp, fifo, srtf): how a GoodputMatrix row
// looks to a policy that runs every job rigidly at its tuned fixed configuration, the gang
// packer that decides whether a job still has room on a GPU type this round, and the two
// linear programs (GLPK simplex) that give the time fractions x_it.
//
// A job's options are its fixed configuration on every type that can hold it (one per
// type, type order): exactly `gpus` GPUs of that type on ceil(gpus / gpus_per_node) nodes,
// at rate T_it = fixed-entry throughput / fixed batch (iterations/s) and, where the job's
// model says so, statistical progress rate raw_goodput / initial batch (progress units/s,
// the units of GoodputRow::progress). A row without a fixed configuration (an adaptive job
// handed to sia-solve with no tuned GPU count and batch) falls back to its smallest entry
// per type; a type with no throughput estimate gets a token rate, so the job only uses what
// the others leave.
//
// Capacity: with `by_nodes` (the default profile) a gang must pack onto the type's nodes
// as the placer would place it -- whole free nodes for each full node of the gang, the
// remainder best-fit on one node, the type's gangs re-packed largest first -- so what the
// policy schedules can be placed; without it (PolicyQuirks::gangs_by_gpu_count, the artifact) only
// the GPU count of the type matters, and the reference placer may split gangs across nodes.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/allocation.hpp"
#include "core/goodput_matrix.hpp"
#include "policy/solve_limits.hpp"

namespace sia::baseline {

// The rate given to a configuration whose throughput is unknown (iterations/s).
inline constexpr double kUnknownRate = 1e-6;

struct Option {
  int type = 0;
  int gpus = 0;                         // the gang: exactly this many GPUs of `type`
  const GoodputEntry* entry = nullptr;  // batch, local batch, accumulation steps, goodput
  double rate = 0;                      // T_it, iterations/s at the fixed batch
  double progress_rate = 0;             // progress units/s; 0 when unknown
  bool estimated = true;                // false: no throughput estimate (kUnknownRate)
};

struct Job {
  std::size_t row = 0;          // index into GoodputMatrix::jobs
  std::vector<Option> options;  // type order, at most one per type
  std::string no_option;        // why `options` is empty
  int pinned = -1;              // a running non-preemptible job: its option index
  int current_type = -1;        // the type it runs on now, when known
  int order = 0;                // position in submission order (GoodputMatrix::order)

  // The option with the highest rate (ties: the current type, then type order); -1: none.
  int fastest() const;
  // Statistical progress left, in seconds at the fastest progress rate; < 0 when unknown.
  double remaining_seconds(const GoodputRow& row) const;
};

// One Job per matrix row, in row (name) order.
std::vector<Job> jobs_of(const GoodputMatrix& m, const std::optional<Allocation>& previous);

// Which gangs still fit on each GPU type this round.
class GangPacker {
 public:
  GangPacker(const Cluster& cluster, bool by_nodes);
  bool fits(int type, int gpus) const;
  // Records the gang; false (and nothing recorded) when it does not fit.
  bool add(int type, int gpus);
  int free_gpus(int type) const { return free_[type]; }
  // "t4 2, a100 0, rtx2080ti 5": free GPUs per type, for reasons.
  std::string describe_free() const;

 private:
  bool packs(int type, int extra) const;
  const Cluster& cluster_;
  bool by_nodes_;
  std::vector<int> free_;
  std::vector<std::vector<int>> gangs_;
};

// The allocation of a job scheduled on one of its options: config (type,
// ceil(gpus / gpus_per_node), gpus) and the option's batch.
JobAllocation allocated(const GoodputRow& row, const Option& o, const Cluster& cluster);
// Why a job that got nothing could not fit this round ("no type has 8 free GPUs ...").
std::string no_room_reason(const Job& job, const GangPacker& packer, const Cluster& cluster);

// The LPs. Variables x[j][k]: the time fraction of job j on its option k.
struct LpResult {
  std::vector<std::vector<double>> x;  // rounded to 5 decimals, clipped to [0, 1]
  std::string status;                  // optimal | feasible | time-limit | infeasible
  std::string note;
  double objective = 0;
};

// Gavel's max-sum-throughput LP: maximise sum T_it x_it subject to sum_t x_it <= 1 and,
// per type, sum_i gpus_it x_it <= GPUs of the type. The simplex answers with a vertex of
// the optimal face; with `centre` the answer is that face's analytic centre instead (the
// interior point of interior_point.hpp, as the artifact's ECOS answers): equal jobs get
// equal time, the objective stays the optimum. When the interior point does not converge
// the vertex is kept and `note` says so.
// `limits` bound the simplex (time, iterations) and the interior point (time).
LpResult max_sum_throughput(const std::vector<Job>& jobs, const Cluster& cluster,
                            const SolveLimits& limits, bool centre);

// The finish-time-fairness LP (what the Sia artifact calls Themis, Gavel's
// FinishTimeFairness_Perf with Sia's denominator): minimise max_i rho_i over the same
// polytope, where rho_i = (age_i + remaining_i / A_i(x)) / D_i, A_i(x) = sum_t P_it x_it
// (progress rates), D_i = prestart_i + total_i / A_i(x_iso) and x_iso the isolated
// allocation (each job 1/m of every type, rows scaled to sum to at most 1). For a fixed
// rho the constraints A_i(x) >= remaining_i / (rho D_i - age_i) are linear: bisection on
// rho, each step one simplex (warm-started); at the smallest feasible rho the LP maximises
// sum_i A_i(x) / A_i(x_iso). Jobs with unknown progress use rho_i = A_i(x_iso) / A_i(x).
// Infeasible or unsolved: the isolated allocation. objective = the min-max rho.
// `limits` bound each simplex (iterations) and the whole bisection (time).
LpResult min_max_finish_time_fairness(const std::vector<Job>& jobs, const GoodputMatrix& m,
                                      double round, const SolveLimits& limits);

}  // namespace sia::baseline
