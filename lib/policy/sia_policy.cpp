#include "policy/sia_policy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "policy/explain.hpp"

namespace sia {

namespace {

// What `spent` so far (seconds, GPU-seconds) extrapolates to for the rest of the job at the
// same progress per unit: spent x left / done; absent while progress is unknown or none.
std::optional<double> to_finish(const GoodputRow& row, double spent) {
  if (!row.progress || !(row.progress->done > 0)) return std::nullopt;
  const double left = std::max(0.0, row.progress->total - row.progress->done);
  return spent * left / row.progress->done;
}

}  // namespace

std::optional<double> SiaPolicy::seconds_left(const GoodputRow& row) {
  return to_finish(row, row.age);
}

double SiaPolicy::priority(const GoodputRow& row, const PolicyOptions& o) {
  const auto left = to_finish(row, row.attained_service);
  if (o.quirks.sia_without_plus || !(o.remaining_scale > 0) || !left) return 1;
  const double work = row.attained_service > 0 ? *left : 0;  // 0 x endless work is no work
  const double w = std::isfinite(work) ? 1 / (1 + work / o.remaining_scale) : 0;
  double floor = o.remaining_floor;
  if (o.remaining_aging > 0) floor += std::max(0.0, row.age) / o.remaining_aging;
  // Never below 1e-3, so a job's values stay far above the tie-breaking terms.
  return std::max({w, std::min(1.0, floor), 1e-3});
}

double SiaPolicy::restart_factor(const GoodputRow& row, bool remaining) {
  const double s = row.restart_penalty;
  const double age = row.adaptivity == Adaptivity::rigid ? row.attained_service : row.age;
  if (age < s) return 1.0;
  const double a = row.age;
  double r = std::max(a - row.restarts * s, 0.0) / (a + s);
  if (const auto t = remaining ? seconds_left(row) : std::nullopt; t && std::isfinite(*t)) {
    r = std::min(r, std::max(*t - row.restarts * s, 0.0) / (*t + s));
  }
  return r;
}

namespace {

struct Column {
  int entry = -1;      // index into the row's entries (-1: a synthetic pin column)
  double goodput = 0;  // after the restart factor
  double value = 0;
};

int find_entry(const GoodputRow& row, const Config& c) {
  for (std::size_t e = 0; e < row.entries.size(); ++e) {
    if (row.entries[e].config == c) return static_cast<int>(e);
  }
  return -1;
}

// The job's configuration last round: the row's current one, else the previous answer's
// (on a type this cluster has).
std::optional<Config> previous_config(const GoodputRow& row,
                                      const std::optional<Allocation>& previous,
                                      const Cluster& cluster) {
  if (row.current || !previous) return row.current;
  if (const JobAllocation* a = previous->find(row.job); a && a->config) {
    int t = cluster.type_index(previous->cluster.types[a->config->type].name);
    if (t >= 0) return Config{t, a->config->nodes, a->config->gpus};
  }
  return std::nullopt;
}

// goodput'^p as the objective counts it, absent when the configuration is dropped (no
// goodput, not the current one); a current one without goodput counts `g` as 1e-9.
std::optional<double> cost_of(double& g, bool is_prev, const PolicyOptions& o) {
  if (o.quirks.sia_clipped_cost) {
    const double a = g > 0 ? std::pow(g, o.p) : (o.p < 0 ? 3000.0 : 0.0);
    return std::min(std::round(a * 100) / 100, 3000.0);
  }
  if (!(g > 0)) {
    if (!is_prev) return std::nullopt;
    g = 1e-9;
  }
  return std::pow(g, o.p);
}

// The MCKP choice of `config`: its use of each capacity row, at no value yet.
MckpChoice choice_of(const std::vector<CapacityRow>& rows, const Cluster& cluster,
                     const Config& config) {
  MckpChoice ch;
  const int gpn = cluster.types[config.type].gpus_per_node;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    int u = row_usage(rows[k], config, gpn);
    if (u > 0) ch.usage.push_back({static_cast<int>(k), u});
  }
  return ch;
}

// Solves with the pins; when the pinned jobs no longer fit (the cluster shrank), keeps only
// the jobs inside a checkpoint-restore pinned, then none, and says so in `note`.
MckpSolution solve_with_pins(const GoodputMatrix& m, MckpProblem& prob, const MckpOptions& mo,
                             std::vector<bool>& pinned, std::string& note) {
  MckpSolution sol = solve_mckp(prob, mo);
  if (sol.status != "infeasible") return sol;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    if (!m.jobs[i].restoring) prob.forced[i] = -1;
  }
  sol = solve_mckp(prob, mo);
  if (sol.status == "infeasible") {
    std::fill(prob.forced.begin(), prob.forced.end(), -1);
    sol = solve_mckp(prob, mo);
  }
  note = "pinned allocations exceed the cluster: pins dropped";
  for (std::size_t i = 0; i < m.jobs.size(); ++i) pinned[i] = prob.forced[i] >= 0;
  return sol;
}

// An admitted guaranteed job (marked so by round/guarantee.hpp, its row kept to the
// configurations that stay on schedule).
bool is_guaranteed(const GoodputRow& row) {
  return row.job_class == JobClass::guaranteed && row.deadline_in.has_value();
}

// Raises every column of a guaranteed job by the best values of all the other jobs summed,
// plus one: running one more guaranteed job is then worth more than anything the other
// jobs could gain by its GPUs, so the ILP runs every guaranteed job it can fit before it
// weighs the rest. The columns of one job rise together: its choice among them, and the
// other jobs' among theirs, are as before.
void dominate(const std::vector<bool>& guaranteed, MckpProblem& prob,
              std::vector<std::vector<Column>>& columns) {
  double lift = 1;
  for (std::size_t i = 0; i < prob.jobs.size(); ++i) {
    if (guaranteed[i]) continue;
    double best = 0;
    for (const auto& ch : prob.jobs[i]) best = std::max(best, ch.value);
    lift += best;
  }
  for (std::size_t i = 0; i < prob.jobs.size(); ++i) {
    if (!guaranteed[i]) continue;
    for (std::size_t c = 0; c < prob.jobs[i].size(); ++c) {
      prob.jobs[i][c].value += lift;
      columns[i][c].value += lift;
    }
  }
}

}  // namespace

Allocation SiaPolicy::allocate(const GoodputMatrix& m, const std::optional<Allocation>& previous) {
  const auto t0 = std::chrono::steady_clock::now();
  const PolicyOptions& o = options_;
  const Cluster& cluster = m.cluster;
  const auto rows = capacity_rows(cluster);
  const double sign = o.p > 0 ? 1.0 : -1.0;

  MckpProblem prob;
  for (const auto& r : rows) prob.capacity.push_back(r.capacity);
  std::vector<std::vector<Column>> columns(m.jobs.size());
  std::vector<std::optional<Config>> prev(m.jobs.size());
  std::vector<double> factor(m.jobs.size(), 1.0);
  std::vector<bool> pinned(m.jobs.size(), false);
  prob.jobs.resize(m.jobs.size());
  prob.forced.assign(m.jobs.size(), -1);
  std::vector<bool> guaranteed(m.jobs.size());
  for (std::size_t i = 0; i < m.jobs.size(); ++i) guaranteed[i] = is_guaranteed(m.jobs[i]);

  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const GoodputRow& row = m.jobs[i];
    prev[i] = previous_config(row, previous, cluster);
    pinned[i] = prev[i] && (row.restoring || !row.preemptible);
    const PolicyQuirks& q = o.quirks;
    double r = prev[i] && !(pinned[i] && q.sia_pins_unpriced)
                   ? restart_factor(row, o.restart_remaining && !q.sia_without_plus)
                   : 1.0;
    factor[i] = r;
    int prev_entry = prev[i] ? find_entry(row, *prev[i]) : -1;
    // Sia+: the best goodput per GPU on each type (for min_efficiency).
    std::vector<double> best_per_gpu(cluster.types.size(), 0.0);
    for (const auto& en : row.entries) {
      double& b = best_per_gpu[en.config.type];
      b = std::max(b, en.goodput / std::max(1, en.config.gpus));
    }
    const double weight = priority(row, o);  // Sia+: remaining-work weighting
    // Sia+: the GPU price. Every goodput is at least 1 (the row's smallest), so every
    // configuration is worth at least (|lambda_n| - 1) x weight before it; the price stays
    // just under that, so no job prefers waiting to running beside idle GPUs.
    const double price = q.sia_without_plus ? 0.0 : o.gpu_price;
    const double price_cap = 0.99 * (std::fabs(o.lambda_n) - 1) * weight;
    for (std::size_t e = 0; e < row.entries.size(); ++e) {
      const GoodputEntry& en = row.entries[e];
      const bool is_prev = static_cast<int>(e) == prev_entry;
      if (pinned[i] && !is_prev && q.sia_pins_unpriced && row.adaptivity == Adaptivity::rigid)
        continue;
      if (!guaranteed[i] && !q.sia_without_plus && !is_prev && o.min_efficiency > 0 &&
          en.goodput / std::max(1, en.config.gpus) <
              o.min_efficiency * best_per_gpu[en.config.type]) {
        continue;
      }
      double g = is_prev ? en.goodput : en.goodput * r;
      if (!q.sia_without_plus && is_prev) g *= 1 + o.hysteresis;
      const std::optional<double> a = cost_of(g, is_prev, o);
      if (!a) continue;
      double value =
          sign * (*a - o.lambda_n) * weight - std::min(price * en.config.gpus, price_cap);
      if (o.lambda_a > 0) value -= o.lambda_a * (is_prev ? -1.0 : 1.0);
      if (!q.sia_solver_ties) {
        // Deterministic tie-breaking, far below any meaningful difference.
        if (is_prev) value += 1e-7;
        value -= 1e-10 * en.config.gpus + 1e-12 * en.config.type;
      }
      MckpChoice ch = choice_of(rows, cluster, en.config);
      ch.value = value;
      columns[i].push_back({static_cast<int>(e), g, value});
      prob.jobs[i].push_back(std::move(ch));
    }
    if (pinned[i]) {
      int col = -1;
      for (std::size_t c = 0; c < columns[i].size(); ++c) {
        if (columns[i][c].entry == prev_entry && prev_entry >= 0) col = static_cast<int>(c);
      }
      if (col < 0) {
        // The pinned configuration is not among the estimates (e.g. past the scale-up cap):
        // keep it anyway, at no value.
        columns[i].push_back({-1, 0, 0});
        prob.jobs[i].push_back(choice_of(rows, cluster, *prev[i]));
        col = static_cast<int>(columns[i].size()) - 1;
      }
      prob.forced[i] = col;
    }
  }

  dominate(guaranteed, prob, columns);

  MckpOptions mo;
  mo.mip_gap = o.mip_gap;
  mo.limits = solve_limits(o);
  mo.use_glpk = o.use_glpk;
  if (o.quirks.sia_glpk_only) {  // no dynamic programme first
    mo.dp.states = 0;
    mo.core_dp.states = 0;
  }
  std::string note;
  MckpSolution sol = solve_with_pins(m, prob, mo, pinned, note);
  const std::string status = sol.status;

  Allocation out;
  out.cluster = cluster;
  out.policy = "sia";
  out.status = status;
  out.note = note;
  out.order = m.order;
  out.objective = sol.value;
  out.bound = sol.bound;
  out.gap = sol.gap;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const GoodputRow& row = m.jobs[i];
    JobAllocation ja;
    ja.job = row.job;
    int c = sol.pick[i];
    if (c >= 0) {
      const Column& col = columns[i][c];
      if (col.entry >= 0) {
        const GoodputEntry& en = row.entries[col.entry];
        ja.config = en.config;
        ja.batch = en.batch;
        ja.goodput = en.goodput;
      } else {
        ja.config = prev[i];
      }
    }
    out.jobs.push_back(std::move(ja));
  }

  ExplainInput ex;
  ex.matrix = &m;
  ex.rows = &rows;
  ex.problem = &prob;
  ex.solution = &sol;
  ex.factor = &factor;
  ex.pinned = &pinned;
  ex.entry_of = [&](std::size_t i, int c) { return columns[i][c].entry; };
  ex.goodput_of = [&](std::size_t i, int c) { return columns[i][c].goodput; };
  explain_allocation(ex, out, o.explain);
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  last_ = sol;
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace sia
