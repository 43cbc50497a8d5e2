// The core step of solve_mckp (mckp_steps.hpp): the least settled jobs re-decided exactly.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "policy/mckp_steps.hpp"

namespace sia::mckp_detail {

bool improve_core(const Reduced& r, std::vector<int>& pick, const std::vector<double>& price,
                  const DpLimits& limits) {
  const std::size_t n = r.choices.size();
  const std::size_t rows = r.capacity.size();
  if (n == 0) return false;
  // Each job's loss per choice at the prices (its best reduced value, or waiting's 0, less
  // the choice's), and the least loss of a choice other than its pick: how soon it would
  // move.
  std::vector<std::vector<double>> loss(n);
  std::vector<double> enter(n);
  for (std::size_t j = 0; j < n; ++j) {
    double best = 0;
    for (const MckpChoice* c : r.choices[j]) {
      loss[j].push_back(reduced_cost(*c, price));
      best = std::max(best, loss[j].back());
    }
    for (double& l : loss[j]) l = best - l;
    enter[j] = pick[j] >= 0 ? best : std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < loss[j].size(); ++c) {
      if (static_cast<int>(c) != pick[j]) enter[j] = std::min(enter[j], loss[j][c]);
    }
  }
  // GPUs per row the jobs outside the core hold (all of them, until the core grows).
  std::vector<double> held(rows, 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    if (pick[j] < 0) continue;
    for (auto [row, amount] : r.choices[j][pick[j]]->usage) held[row] += amount;
  }
  // The core: jobs by how soon they would move, as long as the room they share (what the
  // others leave, at most what the core's choices could use) keeps the state space within
  // the limit. Each core job may keep its pick, wait, or take any choice that loses at most
  // what it entered at; its pick among them, the re-decision can only gain.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return enter[a] < enter[b]; });
  std::vector<double> reach(rows, 0.0);  // the most the core's choices could use per row
  std::vector<std::size_t> core;
  // A core job's candidates: its pick and every choice losing no more than it entered at.
  auto candidate = [&](std::size_t j, std::size_t c) {
    return loss[j][c] <= enter[j] || static_cast<int>(c) == pick[j];
  };
  // The core's room on row k, given what the others hold (h) and what it could use (rc).
  auto room = [&](std::size_t k, const std::vector<double>& h, const std::vector<double>& rc) {
    return std::min(std::floor(std::max(0.0, r.capacity[k] - h[k]) + 1e-9), rc[k]);
  };
  for (std::size_t j : order) {
    if (!std::isfinite(enter[j])) break;
    std::vector<double> h = held, rc = reach;
    if (pick[j] >= 0) {
      for (auto [row, amount] : r.choices[j][pick[j]]->usage) h[row] -= amount;
    }
    std::vector<double> most(rows, 0.0);  // the most it could use per row
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
      if (!candidate(j, c)) continue;
      for (auto [row, amount] : r.choices[j][c]->usage) {
        most[row] = std::max(most[row], static_cast<double>(amount));
      }
    }
    double states = 1;
    for (std::size_t k = 0; k < rows; ++k) {
      rc[k] += most[k];
      states *= room(k, h, rc) + 1;
    }
    if (states > static_cast<double>(limits.states)) continue;
    held = std::move(h);
    reach = std::move(rc);
    core.push_back(j);
  }
  if (core.size() < 2) return false;
  // The core as a problem of its own, in the room the others leave.
  Reduced sub;
  sub.capacity.resize(rows);
  for (std::size_t k = 0; k < rows; ++k) sub.capacity[k] = room(k, held, reach);
  double now = 0;
  for (std::size_t j : core) {
    std::vector<const MckpChoice*> cs;
    std::vector<int> idx;
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
      if (!candidate(j, c)) continue;
      cs.push_back(r.choices[j][c]);
      idx.push_back(static_cast<int>(c));
    }
    if (pick[j] >= 0) now += r.choices[j][pick[j]]->value;
    sub.add_job(static_cast<int>(j), std::move(cs), std::move(idx));
  }
  const DpResult d = exact_dp(sub, price, now, limits);
  if (!d.solved || d.value <= now + 1e-12) return false;
  for (std::size_t i = 0; i < core.size(); ++i) {
    pick[core[i]] = d.pick[i] >= 0 ? sub.index[i][d.pick[i]] : -1;
  }
  return true;
}

}  // namespace sia::mckp_detail
