// The exact dynamic programme of solve_mckp for small problems (mckp_steps.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "policy/mckp_steps.hpp"

namespace sia::mckp_detail {

namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// A state reached in the current layer: its best value so far (kNone: not reached), the
// cost of its GPUs at the prices and the candidate its best came from.
struct Cell {
  double value = kNone;
  double cost = 0;
  std::int32_t arg = 0;
};

// State spaces up to this size (a 64-GPU cluster of three types has 10,625 states) use
// cells kept per thread between calls, all kNone between them: a round's first programme
// would otherwise spend more time faulting fresh pages in than stepping. Larger ones
// allocate their own, for the call.
constexpr std::size_t kKeptStates = std::size_t{1} << 17;

std::vector<Cell>& kept_cells(std::size_t states) {
  thread_local std::vector<Cell> cells;
  if (cells.size() < states) cells.resize(states);
  return cells;
}

// The candidates in flat arrays, job after job in the programme's order: none first (when
// in play), then the job's choices in order, each with what it adds to the state index, its
// GPUs per row, and their cost at the prices.
struct Candidates {
  std::vector<std::size_t> first;  // per job (in order): its first candidate; one past the end
  std::vector<int> choice;         // local choice, -1: none
  std::vector<std::size_t> offset;
  std::vector<double> value, priced;
  std::vector<std::size_t> use_first{0};            // per candidate: its first row used
  std::vector<int> use_row, use_amount, use_limit;  // fits when used[row] <= limit

  // Adds choice c (`ch`; none when null), unless it needs more of a row than the row has.
  void add(int c, const MckpChoice* ch, const std::vector<int>& cap,
           const std::vector<std::size_t>& stride, const std::vector<double>& price) {
    std::size_t off = 0;
    double cost = 0;
    if (ch) {
      for (auto [row, amount] : ch->usage) {
        if (amount > cap[row]) {
          use_row.resize(use_first.back());
          use_amount.resize(use_first.back());
          use_limit.resize(use_first.back());
          return;
        }
        off += stride[row] * static_cast<std::size_t>(amount);
        cost += price[row] * amount;
        use_row.push_back(row);
        use_amount.push_back(amount);
        use_limit.push_back(cap[row] - amount);
      }
    }
    choice.push_back(c);
    offset.push_back(off);
    value.push_back(ch ? ch->value : 0.0);
    priced.push_back(cost);
    use_first.push_back(use_row.size());
  }
};

// The state, GPUs used per row, as one index: row k holds cap[k] GPUs and counts
// stride[k]. Returns the number of states; 0 when over `limit`.
std::size_t state_space(const Reduced& r, std::size_t limit, std::vector<int>& cap,
                        std::vector<std::size_t>& stride) {
  std::size_t states = 1;
  for (std::size_t k = 0; k < r.capacity.size(); ++k) {
    cap[k] = static_cast<int>(std::floor(std::max(0.0, r.capacity[k]) + 1e-9));
    stride[k] = states;
    states *= static_cast<std::size_t>(cap[k]) + 1;
    if (states > limit) return 0;
  }
  return states;
}

// The pick that reaches `state` after the last layer, walked back through the candidates
// kept in each layer (`kept_first[i]` .. `kept_first[i + 1]`: layer i's (state, candidate)).
std::vector<int> walk_back(std::size_t state, const std::vector<std::size_t>& order,
                           const Candidates& cand,
                           const std::vector<std::pair<std::size_t, std::int32_t>>& kept,
                           const std::vector<std::size_t>& kept_first) {
  const std::size_t n = order.size();
  std::vector<int> pick(n, -1);
  for (std::size_t i = n; i-- > 0;) {
    // The state's candidate in layer i: every state on the way was kept there.
    auto k = std::find_if(kept.begin() + static_cast<std::ptrdiff_t>(kept_first[i]),
                          kept.begin() + static_cast<std::ptrdiff_t>(kept_first[i + 1]),
                          [&](const auto& e) { return e.first == state; });
    const std::size_t c = static_cast<std::size_t>(k->second);
    pick[order[i]] = cand.choice[c];
    state -= cand.offset[c];
  }
  return pick;
}

// What the programme steps through at these prices: the jobs in its order and their
// candidates in play, with the bounds that prune its states.
struct Layers {
  double room = 0;  // all the capacity at the prices
  double eps = 0;   // the tolerance on values near the target
  std::vector<std::size_t> order;
  Candidates cand;
  std::vector<double> rest;  // per position: what the jobs after it can add at most
};

// Fills `p` for r at `price` toward `target`; false when a job has no candidate that fits
// (or there are too many candidates to index).
bool layers(const Reduced& r, const std::vector<double>& price, double target,
            const std::vector<int>& cap, const std::vector<std::size_t>& stride, Layers& p) {
  // Each choice's reduced value at these prices (once), each job's best, and the dual
  // bound: all the capacity at the prices plus every job's best.
  const std::size_t n = r.choices.size();
  double& room = p.room;
  for (std::size_t k = 0; k < r.capacity.size(); ++k) room += price[k] * r.capacity[k];
  std::vector<std::size_t> red_first(n, 0);  // per job: its first reduced value
  std::vector<double> red;
  std::vector<double> best(n, 0.0);
  double bound = room;
  for (std::size_t j = 0; j < n; ++j) {
    red_first[j] = red.size();
    for (const MckpChoice* c : r.choices[j]) {
      red.push_back(reduced_cost(*c, price));
      best[j] = std::max(best[j], red.back());
    }
    bound += best[j];
  }
  // Any solution worth at least the target uses, per job, a choice whose reduced value is
  // within (bound - target) of the job's best: the others are never tried.
  const double eps = p.eps = 1e-9 * std::max(1.0, std::fabs(bound));
  const double slack = std::max(0.0, bound - target) + eps;
  auto in_play = [&](std::size_t j, std::size_t c) {
    return best[j] - red[red_first[j] + c] <= slack;
  };
  // Jobs with fewer candidates first: the states multiply later, when less is left to
  // reach the target with and more of them are dropped. (Every job has one: none, or its
  // best choice.)
  std::vector<std::size_t> count(n, 0);
  for (std::size_t j = 0; j < n; ++j) {
    count[j] = best[j] <= slack;
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) count[j] += in_play(j, c);
  }
  std::vector<std::size_t>& order = p.order;
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return count[a] < count[b]; });
  Candidates& cand = p.cand;
  cand.first.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = order[i];
    cand.first[i] = cand.choice.size();
    if (best[j] <= slack) cand.add(-1, nullptr, cap, stride, price);
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
      if (in_play(j, c)) cand.add(static_cast<int>(c), r.choices[j][c], cap, stride, price);
    }
    if (cand.choice.size() == cand.first[i]) return false;  // nothing of it fits
  }
  cand.first[n] = cand.choice.size();
  if (cand.choice.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    return false;
  // What the jobs after each one (in this order) can add at most.
  std::vector<double>& rest = p.rest;
  rest.assign(n + 1, 0.0);
  for (std::size_t i = n; i-- > 0;) rest[i] = rest[i + 1] + best[order[i]];
  return true;
}

}  // namespace

DpResult exact_dp(const Reduced& r, const std::vector<double>& price, double target,
                  const DpLimits& limits) {
  DpResult out;
  const std::size_t n = r.choices.size();
  const std::size_t rows = r.capacity.size();
  if (n == 0) return out;
  std::vector<int> cap(rows);
  std::vector<std::size_t> stride(rows);
  const std::size_t states = state_space(r, limits.states, cap, stride);
  if (states == 0) return out;
  Layers plan;
  if (!layers(r, price, target, cap, stride, plan)) return out;
  const double room = plan.room, eps = plan.eps;
  const std::vector<std::size_t>& order = plan.order;
  const Candidates& cand = plan.cand;
  const std::vector<double>& rest = plan.rest;
  // Layer by layer. The states alive (in the order found: the same for the same problem)
  // carry their value and their GPUs' cost at the prices (set when the state is first
  // reached: the state's, whatever the path); a state's GPUs per row are read off its
  // index. One dense array holds, for the states reached in this layer, their best value
  // so far, their cost and the candidate it came from; only the surviving states'
  // candidates are kept for the walk back, layer after layer.
  struct Alive {
    std::size_t state;
    double value, cost;
  };
  std::vector<Alive> live{{0, 0.0, 0.0}}, kept_live;
  std::vector<std::size_t> born;
  std::vector<Cell> local;  // a large state space's own cells, freed on return
  if (states > kKeptStates) local.resize(states);
  std::vector<Cell>& next = states <= kKeptStates ? kept_cells(states) : local;
  // On every way out: the cells back to kNone, as the next call expects them.
  struct Restore {
    std::vector<Cell>& next;
    const std::vector<std::size_t>& born;
    ~Restore() {
      for (std::size_t t : born) next[t].value = kNone;
    }
  } restore{next, born};
  std::vector<std::size_t> kept_first{0};                  // per layer: its first kept state
  std::vector<std::pair<std::size_t, std::int32_t>> kept;  // (state, candidate)
  std::vector<int> used(rows);
  std::size_t work = 0;
  for (std::size_t i = 0; i < n; ++i) {
    born.clear();
    const std::size_t c0 = cand.first[i], c1 = cand.first[i + 1];
    for (const Alive& a : live) {
      const std::size_t s = a.state;
      for (std::size_t k = 0; k < rows; ++k) {
        used[k] = static_cast<int>(s / stride[k] % (static_cast<std::size_t>(cap[k]) + 1));
      }
      for (std::size_t c = c0; c < c1; ++c) {
        bool fits = true;
        for (std::size_t u = cand.use_first[c]; u < cand.use_first[c + 1]; ++u) {
          fits &= used[cand.use_row[u]] <= cand.use_limit[u];
        }
        if (!fits) continue;
        const std::size_t t = s + cand.offset[c];
        const double w = a.value + cand.value[c];
        Cell& cell = next[t];
        if (cell.value == kNone) {
          born.push_back(t);
          cell.cost = a.cost + cand.priced[c];
          cell.value = w;  // whatever w is, the state has a candidate to walk back through
          cell.arg = static_cast<std::int32_t>(c);
        } else if (w > cell.value) {
          cell.value = w;
          cell.arg = static_cast<std::int32_t>(c);
        }
      }
      work += c1 - c0;
      if (work > limits.work) {
        out.work = work;
        return out;
      }
    }
    kept_live.clear();
    for (std::size_t t : born) {
      Cell& cell = next[t];
      // What this state can still reach: its value, the later jobs' best reduced values and
      // the prices of the room it leaves.
      if (cell.value + rest[i + 1] + (room - cell.cost) >= target - eps) {
        kept_live.push_back({t, cell.value, cell.cost});
        kept.emplace_back(t, cell.arg);
      }
      cell.value = kNone;
    }
    born.clear();
    live.swap(kept_live);
    kept_first.push_back(kept.size());
    if (live.empty()) break;
  }
  out.work = work;
  if (live.empty()) return out;  // nothing worth the target
  const Alive* top = &live.front();
  for (const Alive& a : live) {
    if (a.value > top->value) top = &a;
  }
  if (top->value < target - eps) return out;
  out.value = top->value;
  out.pick = walk_back(top->state, order, cand, kept, kept_first);
  out.solved = true;
  return out;
}

}  // namespace sia::mckp_detail
