// The genetic search inside the Pollux baseline (policy/pollux.cpp), on an abstract problem:
// jobs x virtual nodes, each cell the replicas (GPUs) of a job on a node. It follows the
// Pollux baseline of the Sia paper's evaluation (Subramanya et al., SOSP '23), an NSGA-II:
//   fitness    F1 = -PM_p(scale * speedup_j * restart_j), the power mean over all jobs of
//              (x + 1e-3) (p = 0: the geometric mean of max(x, 1e-3)); restart_j applies
//              when job j's row differs from the base state; F2 = -(sum of speedups) / GPUs
//              of the nodes in use (Pollux's cluster utility); both minimised;
//   crossover  single point over the job axis (rows above a random cut swapped between the
//              two parents), with pymoo's default probability 0.9 per mating;
//   mutation   per job: reset the row to the base state (p 0.1); zero each element (p 0.1
//              for 1 job in 10); then grow element (j, n) to U[x, capacity_n] with
//              probability p1 + p2 - p1 p2, p1 = 1 / #nodes with a free GPU (if n has one),
//              p2 = 1 / #such nodes j already uses (if j uses n);
//   repair     pinned rows copied from the base state; at most one distributed job per
//              node (the first in job order keeps it); per job, in a random node order, the
//              cumulative sum clipped at max_replicas and at most max_nodes nodes; per node,
//              the cumulative sum over jobs clipped at its capacity (earlier jobs win); rows
//              below min_replicas zeroed;
//   search     binary tournaments (Pareto dominance, then crowding distance, then chance),
//              offspring deduplicated against the population (pymoo retries matings up to
//              100 times to fill the offspring), rank-and-crowding survival; the first
//              generation is the initial population, as pymoo counts it. The answer is the
//              individual of least F1 on the final Pareto front (ties: the earliest).
// `single_objective` swaps the two-objective machinery for an elitist GA on F1 alone
// (tournaments and survival by F1); policy/pollux.cpp says which one it runs and why.
// speedup(j, nodes, replicas) is memoised per (nodes, replicas) for the search's lifetime.
// Randomness comes only from the std::mt19937 passed in, drawn through portable helpers, so
// a seed gives the same answer on every platform.
// Thread-safety: a GeneticSearch is used by one thread at a time (its memo is mutable).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace sia::pollux {

using Cell = std::int16_t;
using State = std::vector<Cell>;  // jobs x nodes, row-major

// What one job's row of a state (its V cells) holds: its GPUs, the vnodes it uses, and
// whether it differs from its row of the base state.
struct RowUse {
  int gpus = 0;
  int vnodes = 0;
  bool moved = false;
};
inline RowUse row_use(const Cell* row, const Cell* base, int V) {
  RowUse u;
  for (int v = 0; v < V; ++v) {
    u.gpus += row[v];
    u.vnodes += row[v] > 0;
    u.moved |= row[v] != base[v];
  }
  return u;
}

struct GaJob {
  int min_replicas = 0;  // a row with fewer (and more than none) is zeroed
  int max_replicas = 1;
  bool pinned = false;        // keeps its base-state row (put pinned jobs first)
  double restart_factor = 1;  // multiplies the speedup when the row leaves the base state
};

struct GaProblem {
  std::vector<int> capacity;  // GPUs per node
  std::vector<GaJob> jobs;    // in priority order: earlier jobs win conflicts in repair
  State base;                 // jobs x nodes: the allocation in force
  double p = -1;              // power of the mean in F1
  double scale = 1;           // speedups are multiplied by this in F1
  int max_nodes = 16;         // per job
  // Speedup of job j on `nodes` nodes holding `replicas` GPUs (nodes, replicas >= 1).
  std::function<double(int job, int nodes, int replicas)> speedup;
};

struct GaOptions {
  int population = 100;
  int generations = 100;  // including the initial population
  int max_mating_rounds = 100;
  bool single_objective = false;
};

struct GaResult {
  State best;
  double f1 = 0, f2 = 0;
  std::vector<State> front;  // the final Pareto front (single objective: the population)
  int evaluations = 0;
};

class GeneticSearch {
 public:
  explicit GeneticSearch(GaProblem problem);

  int jobs() const { return static_cast<int>(problem_.jobs.size()); }
  int nodes() const { return static_cast<int>(problem_.capacity.size()); }
  const GaProblem& problem() const { return problem_; }

  void crossover(State& a, State& b, std::mt19937& rng) const;
  void mutate(State& x, std::mt19937& rng) const;
  void repair(State& x, std::mt19937& rng) const;
  // (F1, F2) of a repaired state.
  std::pair<double, double> evaluate(const State& x) const;
  // Runs the search from `initial` (repaired and deduplicated first; the base state when
  // empty).
  GaResult run(std::vector<State> initial, const GaOptions& options, std::mt19937& rng) const;

 private:
  double speedup(int j, int nodes, int replicas) const;

  GaProblem problem_;
  // Per job: [nodes * (max_replicas + 1) + replicas], -1 until computed.
  mutable std::vector<std::vector<double>> memo_;
};

// Portable draws from a std::mt19937 (the standard distributions differ between libraries).
double unit_draw(std::mt19937& rng);              // [0, 1)
int int_draw(std::mt19937& rng, int lo, int hi);  // [lo, hi]

}  // namespace sia::pollux
