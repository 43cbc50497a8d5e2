#include "model/fit.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include <nlopt.h>

namespace sia {

namespace {

constexpr double kLow = 1e-8;

struct Terms {
  double bottleneck;
  double retro;
  int bottleneck_index;  // parameter index, or -1 for the constant
  int retro_index;
};

// A point with what the loss needs of it that does not depend on the parameters: its
// measured times' logarithms are taken once per fit, not once per evaluation.
struct Prepared {
  int nodes;
  int replicas;
  double local_bsz;
  double log_compute;
  double log_step;
};

std::vector<Prepared> prepare(const std::vector<FitPoint>& points) {
  std::vector<Prepared> out;
  out.reserve(points.size());
  for (const auto& pt : points) {
    out.push_back(
        {pt.nodes, pt.replicas, pt.local_bsz, std::log(pt.compute_time), std::log(pt.step_time)});
  }
  return out;
}

Terms network_terms(const std::array<double, 7>& p, const Prepared& pt) {
  if (pt.nodes > 1) return {p[2], p[3], 2, 3};
  if (pt.replicas > 1) return {p[4], p[5], 4, 5};
  return {1e-8, 1e-8, -1, -1};
}

double loss_of(const std::array<double, 7>& p, const std::vector<Prepared>& points,
               std::array<double, 7>* grad) {
  const std::size_t n = points.size();
  const double gamma = p[6];
  double sum1 = 0, sum2 = 0;
  // Partial sums of e * d(log pred)/d(param) for the two RMSE terms.
  std::array<double, 7> g1{}, g2{};
  for (const auto& pt : points) {
    const double tc = p[0] + p[1] * pt.local_bsz;
    const Terms t = network_terms(p, pt);
    const double m = std::max(pt.replicas - 2.0, 1e-8);
    const double tn = t.bottleneck + t.retro * m;
    const double log_tc = std::log(tc), log_tn = std::log(tn);
    const double e1 = log_tc - pt.log_compute;
    // log T_opt = (1/gamma) * log(tc^gamma + tn^gamma), computed stably.
    const double a = gamma * log_tc, b = gamma * log_tn;
    const double hi = std::max(a, b);
    // exp(0) is exactly 1: the larger term costs no exp.
    const double log_u = hi + std::log(a == hi ? 1.0 + std::exp(b - hi) : std::exp(a - hi) + 1.0);
    const double log_to = log_u / gamma;
    const double e2 = log_to - pt.log_step;
    sum1 += e1 * e1;
    sum2 += e2 * e2;
    if (grad) {
      const double wc = std::exp(a - log_u), wn = std::exp(b - log_u);
      g1[0] += e1 / tc;
      g1[1] += e1 * pt.local_bsz / tc;
      g2[0] += e2 * wc / tc;
      g2[1] += e2 * wc * pt.local_bsz / tc;
      if (t.bottleneck_index >= 0) {
        g2[t.bottleneck_index] += e2 * wn / tn;
        g2[t.retro_index] += e2 * wn * m / tn;
      }
      const double dlog_to_dgamma = -log_u / (gamma * gamma) + (wc * log_tc + wn * log_tn) / gamma;
      g2[6] += e2 * dlog_to_dgamma;
    }
  }
  const double rmse1 = std::sqrt(sum1 / n), rmse2 = std::sqrt(sum2 / n);
  const double rn = p[3] / p[2], rr = p[5] / p[4];
  const double loss = rmse1 + rmse2 + 1e-3 * (gamma - 1) * (gamma - 1) + 1e-2 * (rn * rn + rr * rr);
  if (grad) {
    for (int i = 0; i < 7; ++i) {
      double v = 0;
      if (rmse1 > 0) v += g1[i] / (n * rmse1);
      if (rmse2 > 0) v += g2[i] / (n * rmse2);
      (*grad)[i] = v;
    }
    (*grad)[6] += 2e-3 * (gamma - 1);
    (*grad)[2] += -2e-2 * rn * rn / p[2];
    (*grad)[3] += 2e-2 * rn / p[2];
    (*grad)[4] += -2e-2 * rr * rr / p[4];
    (*grad)[5] += 2e-2 * rr / p[4];
  }
  return loss;
}

}  // namespace

double fit_loss(const std::array<double, 7>& p, const std::vector<FitPoint>& points,
                std::array<double, 7>* grad) {
  return loss_of(p, prepare(points), grad);
}

namespace {

// The six time parameters span orders of magnitude (1e-8 to 1) and the regulariser divides
// them by each other: the problem is badly conditioned in the raw parameters, and bounded
// quasi-Newton methods stall there. Optimising their logarithms (same objective, same
// bounds) converges reliably; gamma stays linear.
double to_param(int k, double x) {
  return k == 6 ? x : std::exp(x);
}
double from_param(int k, double v) {
  return k == 6 ? v : std::log(v);
}

struct Problem {
  std::vector<Prepared> points;
  std::array<double, 7> full;
  std::vector<int> free;
  // The best point any evaluation saw: L-BFGS can end on a failed line search with its
  // last iterate worse than an earlier one.
  double best_f = HUGE_VAL;
  std::vector<double> best_x;
};

double objective(unsigned n, const double* x, double* grad, void* data) {
  auto* pr = static_cast<Problem*>(data);
  std::array<double, 7> p = pr->full;
  for (unsigned i = 0; i < n; ++i) p[pr->free[i]] = to_param(pr->free[i], x[i]);
  std::array<double, 7> g{};
  double v = loss_of(p, pr->points, grad ? &g : nullptr);
  if (grad) {
    // Chain rule through the log parameterisation: d/d(log a) = a * d/da.
    for (unsigned i = 0; i < n; ++i) {
      int k = pr->free[i];
      grad[i] = k == 6 ? g[k] : g[k] * p[k];
    }
  }
  if (std::isfinite(v) && v < pr->best_f) {
    pr->best_f = v;
    pr->best_x.assign(x, x + n);
  }
  return v;
}

// One local run from `x` (updated in place to the best point seen); true on convergence.
bool run_local(nlopt_algorithm algo, Problem& pr, std::vector<double>& x,
               const std::vector<double>& lo, const std::vector<double>& hi) {
  const unsigned n = static_cast<unsigned>(x.size());
  nlopt_opt opt = nlopt_create(algo, n);
  nlopt_set_lower_bounds(opt, lo.data());
  nlopt_set_upper_bounds(opt, hi.data());
  nlopt_set_min_objective(opt, objective, &pr);
  nlopt_set_ftol_rel(opt, 1e-10);
  nlopt_set_xtol_rel(opt, 1e-10);
  nlopt_set_maxeval(opt, 2000);
  double f = 0;
  nlopt_result res = nlopt_optimize(opt, x.data(), &f);
  nlopt_destroy(opt);
  if (!pr.best_x.empty()) x = pr.best_x;
  return res > 0 || res == NLOPT_MAXEVAL_REACHED;
}

}  // namespace

namespace {

PerfParams fit_uncached(const std::vector<FitPoint>& points) {
  std::array<double, 7> p = {0.1, 0.01, 0.1, 0.01, 0.1, 0.01, 1.001};
  std::array<bool, 7> frozen{};
  if (points.empty()) return PerfParams::from_array(p);
  std::set<double> batches;
  bool multi_node = false, one_node_multi = false, over_two = false;
  double mean_tc = 0;
  for (const auto& pt : points) {
    batches.insert(pt.local_bsz);
    multi_node |= pt.nodes > 1;
    one_node_multi |= pt.nodes == 1 && pt.replicas > 1;
    over_two |= pt.replicas > 2;
    mean_tc += pt.compute_time;
  }
  mean_tc /= points.size();
  if (batches.size() == 1) {
    p[0] = mean_tc / 2;
    frozen[0] = true;
  }
  if (!multi_node) {
    p[2] = p[3] = kLow;
    frozen[2] = frozen[3] = true;
  }
  if (!one_node_multi) {
    p[4] = p[5] = kLow;
    frozen[4] = frozen[5] = true;
  }
  if (!over_two) {
    p[3] = p[5] = kLow;
    frozen[3] = frozen[5] = true;
  }
  Problem pr;
  pr.points = prepare(points);
  pr.full = p;
  for (int i = 0; i < 7; ++i) {
    if (!frozen[i]) pr.free.push_back(i);
  }
  const unsigned n = static_cast<unsigned>(pr.free.size());
  std::vector<double> x(n), lo(n), hi(n);
  for (unsigned i = 0; i < n; ++i) {
    int k = pr.free[i];
    x[i] = from_param(k, p[k]);
    lo[i] = k == 6 ? 1.0 : std::log(kLow);
    hi[i] = k == 6 ? 10.0 : HUGE_VAL;
  }
  // L-BFGS first (fast); should its line search fail, restart it from the best point,
  // then fall back to MMA, which converges on the rare cases L-BFGS cannot.
  const nlopt_algorithm plan[] = {NLOPT_LD_LBFGS, NLOPT_LD_LBFGS, NLOPT_LD_MMA};
  for (nlopt_algorithm algo : plan) {
    if (n == 0) break;
    if (run_local(algo, pr, x, lo, hi)) break;
  }
  for (unsigned i = 0; i < n; ++i) {
    if (std::isfinite(x[i])) {
      p[pr.free[i]] = to_param(pr.free[i], std::clamp(x[i], lo[i], hi[i]));
    }
  }
  if (!multi_node) {
    p[2] = std::max(p[2], p[4] * 1.1);
    p[3] = std::max(p[3], p[5] * 1.1);
  }
  return PerfParams::from_array(p);
}

// The points' bytes, in order: equal keys are equal inputs, so equal fits.
std::string memo_key(const std::vector<FitPoint>& points) {
  std::string key;
  key.reserve(points.size() * (2 * sizeof(int) + 3 * sizeof(double)));
  auto put = [&key](const auto& v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const auto& pt : points) {
    put(pt.nodes);
    put(pt.replicas);
    put(pt.local_bsz);
    put(pt.compute_time);
    put(pt.step_time);
  }
  return key;
}

}  // namespace

PerfParams fit_perf_params(const std::vector<FitPoint>& points) {
  static std::mutex mu;
  static std::unordered_map<std::string, PerfParams> memo;
  static std::size_t key_bytes = 0;
  std::string key = memo_key(points);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const PerfParams fitted = fit_uncached(points);
  std::lock_guard<std::mutex> lock(mu);
  if (memo.size() >= kMaxMemoFits || key_bytes + key.size() > kMaxMemoBytes) {
    memo.clear();
    key_bytes = 0;
  }
  const std::size_t size = key.size();
  if (memo.emplace(std::move(key), fitted).second) key_bytes += size;
  return fitted;
}

}  // namespace sia
