#include "policy/pollux_ga.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace sia::pollux {

namespace {

constexpr double kCrossoverProb = 0.9;  // pymoo's default
constexpr double kResetProb = 0.1;      // mutation (1): back to the base state
constexpr double kZeroRowProb = 0.1;    // mutation (2): rows picked for zeroing ...
constexpr double kZeroCellProb = 0.1;   // ... and each of their elements
constexpr double kBoundary = 1e14;      // pymoo's crowding distance of a front's extremes

struct Individual {
  State x;
  std::uint64_t hash = 0;
  double f1 = 0, f2 = 0;
  int rank = 0;
  double crowding = 0;
};

std::uint64_t hash_state(const State& x) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (Cell c : x) {
    h ^= static_cast<std::uint16_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

bool dominates(const Individual& a, const Individual& b) {
  return a.f1 <= b.f1 && a.f2 <= b.f2 && (a.f1 < b.f1 || a.f2 < b.f2);
}

// Non-dominated fronts (indices into `pop`, ascending), best first. Two objectives: in
// (F1, F2) order a point joins the first front whose last point has a larger F2 (or equals
// it exactly); the fronts' last F2s never decrease, so this is the full sort in O(n log n).
std::vector<std::vector<int>> fronts_of(const std::vector<Individual>& pop) {
  std::vector<int> order(pop.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (pop[a].f1 != pop[b].f1) return pop[a].f1 < pop[b].f1;
    if (pop[a].f2 != pop[b].f2) return pop[a].f2 < pop[b].f2;
    return a < b;
  });
  std::vector<std::vector<int>> fronts;
  std::vector<int> last;  // per front, its latest point
  for (int i : order) {
    std::size_t k = 0;
    while (k < fronts.size()) {
      const Individual& q = pop[last[k]];
      if (q.f2 > pop[i].f2 || (q.f2 == pop[i].f2 && q.f1 == pop[i].f1)) break;
      ++k;
    }
    if (k == fronts.size()) {
      fronts.emplace_back();
      last.push_back(i);
    }
    fronts[k].push_back(i);
    last[k] = i;
  }
  for (auto& f : fronts) std::sort(f.begin(), f.end());
  return fronts;
}

// Crowding distance over both objectives, normalised by each objective's range in the front.
void set_crowding(std::vector<Individual>& pop, const std::vector<int>& front) {
  const std::size_t n = front.size();
  for (int i : front) pop[i].crowding = 0;
  if (n <= 2) {
    for (int i : front) pop[i].crowding = kBoundary;
    return;
  }
  for (int obj = 0; obj < 2; ++obj) {
    auto f = [&](int i) { return obj == 0 ? pop[i].f1 : pop[i].f2; };
    std::vector<int> order(front);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return f(a) < f(b); });
    const double range = f(order.back()) - f(order.front());
    pop[order.front()].crowding = kBoundary;
    pop[order.back()].crowding = kBoundary;
    if (!(range > 0)) continue;
    for (std::size_t k = 1; k + 1 < n; ++k) {
      if (pop[order[k]].crowding >= kBoundary) continue;
      pop[order[k]].crowding += (f(order[k + 1]) - f(order[k - 1])) / range / 2;
    }
  }
}

// Keeps `n` of `pop`: whole fronts, the last one cut by crowding distance (ties by chance).
std::vector<Individual> survive(std::vector<Individual> pop, std::size_t n, bool single,
                                std::mt19937& rng) {
  std::vector<Individual> out;
  if (single) {
    std::vector<int> order(pop.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return pop[a].f1 < pop[b].f1; });
    for (std::size_t k = 0; k < order.size() && out.size() < n; ++k) {
      out.push_back(std::move(pop[order[k]]));
      out.back().rank = static_cast<int>(k);
      out.back().crowding = 0;
    }
    return out;
  }
  auto fronts = fronts_of(pop);
  for (std::size_t r = 0; r < fronts.size() && out.size() < n; ++r) {
    std::vector<int>& front = fronts[r];
    set_crowding(pop, front);
    for (int i : front) pop[i].rank = static_cast<int>(r);
    if (out.size() + front.size() > n) {
      // Shuffle first so that equal distances are cut by chance, then by distance.
      for (std::size_t k = front.size(); k > 1; --k) {
        std::swap(front[k - 1], front[int_draw(rng, 0, static_cast<int>(k) - 1)]);
      }
      std::stable_sort(front.begin(), front.end(),
                       [&](int a, int b) { return pop[a].crowding > pop[b].crowding; });
      front.resize(n - out.size());
    }
    for (int i : front) out.push_back(std::move(pop[i]));
  }
  return out;
}

}  // namespace

double unit_draw(std::mt19937& rng) {
  return (rng() >> 5) * (1.0 / 134217728.0);
}

int int_draw(std::mt19937& rng, int lo, int hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  return lo + static_cast<int>((static_cast<std::uint64_t>(rng()) * span) >> 32);
}

GeneticSearch::GeneticSearch(GaProblem problem) : problem_(std::move(problem)) {
  memo_.resize(problem_.jobs.size());
  for (std::size_t j = 0; j < problem_.jobs.size(); ++j) {
    const int m = std::max(1, problem_.jobs[j].max_replicas);
    memo_[j].assign(static_cast<std::size_t>(m + 1) * (m + 1), -1.0);  // nodes <= replicas
  }
}

double GeneticSearch::speedup(int j, int n, int k) const {
  const int m = std::max(1, problem_.jobs[j].max_replicas);
  if (k > m || n > m) return std::max(0.0, problem_.speedup(j, n, k));
  double& v = memo_[j][static_cast<std::size_t>(n) * (m + 1) + k];
  if (v < 0) v = std::max(0.0, problem_.speedup(j, n, k));
  return v;
}

void GeneticSearch::crossover(State& a, State& b, std::mt19937& rng) const {
  if (unit_draw(rng) >= kCrossoverProb || jobs() == 0) return;
  const int cut = int_draw(rng, 0, jobs() - 1);
  const auto end = static_cast<std::ptrdiff_t>(cut) * nodes();
  std::swap_ranges(a.begin(), a.begin() + end, b.begin());
}

void GeneticSearch::mutate(State& x, std::mt19937& rng) const {
  const int J = jobs(), V = nodes();
  const State& base = problem_.base;
  for (int j = 0; j < J; ++j) {
    if (unit_draw(rng) < kResetProb) {
      std::copy_n(base.begin() + j * V, V, x.begin() + j * V);
    }
  }
  for (int j = 0; j < J; ++j) {
    if (unit_draw(rng) >= kZeroRowProb) continue;
    for (int n = 0; n < V; ++n) {
      if (unit_draw(rng) < kZeroCellProb) x[j * V + n] = 0;
    }
  }
  // Growth, against the free GPUs left after (1) and (2) (not updated as cells grow).
  std::vector<char> free(V, 0);
  int free_nodes = 0;
  for (int n = 0; n < V; ++n) {
    int used = 0;
    for (int j = 0; j < J; ++j) used += x[j * V + n];
    free[n] = problem_.capacity[n] - used >= 1;
    free_nodes += free[n];
  }
  if (free_nodes == 0) return;
  const double p1 = 1.0 / free_nodes;
  for (int j = 0; j < J; ++j) {
    Cell* row = &x[j * V];
    int own = 0;
    for (int n = 0; n < V; ++n) own += free[n] && row[n] > 0;
    const double p2 = own > 0 ? 1.0 / own : 0.0;
    for (int n = 0; n < V; ++n) {
      if (!free[n]) continue;
      const double p = row[n] > 0 ? p1 + p2 - p1 * p2 : p1;
      if (unit_draw(rng) < p) {
        row[n] =
            static_cast<Cell>(int_draw(rng, row[n], std::max<int>(row[n], problem_.capacity[n])));
      }
    }
  }
}

void GeneticSearch::repair(State& x, std::mt19937& rng) const {
  const int J = jobs(), V = nodes();
  for (int j = 0; j < J; ++j) {
    if (problem_.jobs[j].pinned) {
      std::copy_n(problem_.base.begin() + j * V, V, x.begin() + j * V);
    }
  }
  // (1) At most one distributed job per node: the first in job order.
  std::vector<char> distributed(J, 0);
  for (int j = 0; j < J; ++j) {
    int used = 0;
    for (int n = 0; n < V; ++n) used += x[j * V + n] > 0;
    distributed[j] = used > 1;
  }
  for (int n = 0; n < V; ++n) {
    bool taken = false;
    for (int j = 0; j < J; ++j) {
      Cell& c = x[j * V + n];
      if (c == 0 || !distributed[j]) continue;
      if (taken) c = 0;
      taken = true;
    }
  }
  // (2) max_replicas and max_nodes per job, in a random node order. Only the order of the
  // row's used nodes matters, and none when the row is within both bounds.
  std::vector<int> on;
  for (int j = 0; j < J; ++j) {
    const GaJob& job = problem_.jobs[j];
    if (job.pinned) continue;
    Cell* row = &x[j * V];
    on.clear();
    int total = 0;
    for (int n = 0; n < V; ++n) {
      if (row[n] == 0) continue;
      on.push_back(n);
      total += row[n];
    }
    if (total <= job.max_replicas && static_cast<int>(on.size()) <= problem_.max_nodes) {
      continue;
    }
    const int u = static_cast<int>(on.size());
    for (int k = u; k > 1; --k) std::swap(on[k - 1], on[int_draw(rng, 0, k - 1)]);
    int cum = 0, nodes = 0;
    for (int n : on) {
      const int c = row[n];
      int keep = std::min(cum + c, job.max_replicas) - std::min(cum, job.max_replicas);
      cum += c;
      if (keep > 0 && nodes >= problem_.max_nodes) keep = 0;
      if (keep > 0) ++nodes;
      row[n] = static_cast<Cell>(keep);
    }
  }
  // (3) Node capacity: earlier jobs win.
  for (int n = 0; n < V; ++n) {
    const int cap = problem_.capacity[n];
    int cum = 0;
    for (int j = 0; j < J; ++j) {
      Cell& c = x[j * V + n];
      if (c == 0) continue;
      const int keep = std::min(cum + c, cap) - std::min(cum, cap);
      cum += c;
      c = static_cast<Cell>(keep);
    }
  }
  // (4) min_replicas.
  for (int j = 0; j < J; ++j) {
    if (problem_.jobs[j].pinned) continue;
    int total = 0;
    for (int n = 0; n < V; ++n) total += x[j * V + n];
    if (total > 0 && total < problem_.jobs[j].min_replicas) {
      std::fill_n(x.begin() + j * V, V, Cell{0});
    }
  }
}

std::pair<double, double> GeneticSearch::evaluate(const State& x) const {
  const int J = jobs(), V = nodes();
  if (J == 0) return {0.0, 0.0};
  const double p = problem_.p;
  double sum = 0, raw = 0;
  for (int j = 0; j < J; ++j) {
    const RowUse u = row_use(&x[j * V], &problem_.base[j * V], V);
    double s = u.gpus > 0 ? speedup(j, u.vnodes, u.gpus) : 0.0;
    raw += s;
    s *= problem_.scale;
    if (u.moved) s *= problem_.jobs[j].restart_factor;
    sum += p == 0 ? std::log(std::max(s, 1e-3)) : std::pow(s + 1e-3, p);
  }
  const double mean = p == 0 ? std::exp(sum / J) : std::pow(sum / J, 1.0 / p);
  int active = 0;
  for (int v = 0; v < V; ++v) {
    for (int j = 0; j < J; ++j) {
      if (x[j * V + v] > 0) {
        active += problem_.capacity[v];
        break;
      }
    }
  }
  return {-mean, active > 0 ? -raw / active : 0.0};
}

GaResult GeneticSearch::run(std::vector<State> initial, const GaOptions& o,
                            std::mt19937& rng) const {
  const std::size_t size = static_cast<std::size_t>(std::max(1, o.population));
  const bool single = o.single_objective;
  GaResult result;
  std::unordered_set<std::uint64_t> seen;  // the population's and the offspring's states
  std::vector<Individual> pop;
  if (initial.empty()) initial.push_back(problem_.base);
  for (State& x : initial) {
    repair(x, rng);
    Individual ind;
    ind.hash = hash_state(x);
    if (!seen.insert(ind.hash).second) continue;
    ind.x = std::move(x);
    std::tie(ind.f1, ind.f2) = evaluate(ind.x);
    ++result.evaluations;
    pop.push_back(std::move(ind));
  }
  pop = survive(std::move(pop), size, single, rng);

  // Binary tournament: dominance, then crowding distance (single objective: F1), then chance.
  auto better = [&](int a, int b) {
    if (single) {
      if (pop[a].f1 != pop[b].f1) return pop[a].f1 < pop[b].f1 ? a : b;
    } else {
      if (dominates(pop[a], pop[b])) return a;
      if (dominates(pop[b], pop[a])) return b;
      if (pop[a].crowding != pop[b].crowding) return pop[a].crowding > pop[b].crowding ? a : b;
    }
    return unit_draw(rng) < 0.5 ? a : b;
  };
  std::vector<int> perm;
  for (int gen = 1; gen < o.generations; ++gen) {
    seen.clear();
    for (const auto& ind : pop) seen.insert(ind.hash);
    std::vector<Individual> off;
    for (int round = 0; round < o.max_mating_rounds && off.size() < size; ++round) {
      const std::size_t matings = (size - off.size() + 1) / 2;
      // Tournament pairs from concatenated random permutations of the population.
      perm.clear();
      while (perm.size() < 4 * matings) {
        const std::size_t start = perm.size();
        for (std::size_t i = 0; i < pop.size(); ++i) perm.push_back(static_cast<int>(i));
        for (std::size_t k = pop.size(); k > 1; --k) {
          std::swap(perm[start + k - 1], perm[start + int_draw(rng, 0, static_cast<int>(k) - 1)]);
        }
      }
      for (std::size_t m = 0; m < matings; ++m) {
        State a = pop[better(perm[4 * m], perm[4 * m + 1])].x;
        State b = pop[better(perm[4 * m + 2], perm[4 * m + 3])].x;
        crossover(a, b, rng);
        for (State* c : {&a, &b}) {
          mutate(*c, rng);
          repair(*c, rng);
          Individual ind;
          ind.hash = hash_state(*c);
          if (off.size() >= size || !seen.insert(ind.hash).second) continue;
          ind.x = std::move(*c);
          std::tie(ind.f1, ind.f2) = evaluate(ind.x);
          ++result.evaluations;
          off.push_back(std::move(ind));
        }
      }
    }
    if (off.empty()) break;  // nothing new can be bred
    for (auto& ind : off) pop.push_back(std::move(ind));
    pop = survive(std::move(pop), size, single, rng);
  }

  // The answer: least F1 on the Pareto front of the final population.
  std::vector<int> front;
  if (single) {
    front.resize(pop.size());
    std::iota(front.begin(), front.end(), 0);
  } else {
    front = fronts_of(pop).front();
  }
  int best = front.front();
  for (int i : front) {
    if (pop[i].f1 < pop[best].f1 || (pop[i].f1 == pop[best].f1 && i < best)) best = i;
  }
  result.best = pop[best].x;
  result.f1 = pop[best].f1;
  result.f2 = pop[best].f2;
  for (int i : front) result.front.push_back(pop[i].x);
  return result;
}

}  // namespace sia::pollux
