// The assignment LP's primal-dual interior point (interior_point.hpp).
//
// Scaled problem: every type row is divided by its capacity and the values by the
// largest, so every right-hand side is 1 and the values are at most 1. With slacks s >= 0
// (rows: the jobs, then the types) and dual variables y >= 0, w >= 0:
//   primal  A x + s = 1,         dual  A^T y - w = c,
// and the central path x_i w_i = s_r y_r = mu. Each step solves the Newton system through
// the normal equations (A D A^T + E) dy = rhs, D = x / w, E = s / y; the job rows form a
// diagonal block (a column is in one job row), eliminated first, leaving a dense system on
// the type rows. A job's part of that Schur complement is written so that no large terms
// cancel: diag_t d_t a_t^2 (sum_{k != t} d_k + E_j) / (sum_k d_k + E_j), off the diagonal
// -d_t a_t d_u a_u / (sum_k d_k + E_j).
#include "policy/interior_point.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace sia::baseline {

namespace {

using Clock = std::chrono::steady_clock;

// Mehrotra's iterations until the duality measure falls below kSwitchMu, then centring
// steps that divide the target by kShrink down to kFinalMu. Near the end the normal
// equations may become too ill-conditioned to solve (a type whose every column is in use
// on the optimal face); then the last point close to the path, at a target of at most
// kEnoughMu, is the answer (its distance to the centre is of the order of its target).
constexpr double kSwitchMu = 1e-8;
constexpr double kEnoughMu = 1e-9;
constexpr double kFinalMu = 1e-11;
constexpr double kShrink = 0.1;
constexpr double kToBoundary = 0.99;  // fraction of the step to the boundary
constexpr int kMaxSteps = 200;

struct Problem {
  int n = 0, nj = 0, nt = 0;
  std::vector<int> job, type;
  std::vector<double> a, c;              // type-row coefficient (weight / capacity), value
  std::vector<std::vector<int>> of_job;  // columns per job
  int rows() const { return nj + nt; }
};

struct Point {
  std::vector<double> x, w;  // per column
  std::vector<double> s, y;  // per row
};

// Right-hand sides of one Newton system: complementarity targets per column and row.
struct Targets {
  std::vector<double> xw, sy;
};

class Newton {
 public:
  explicit Newton(const Problem& p) : p_(p) {}

  // The direction from `z` towards x w = targets.xw, s y = targets.sy, A x + s = 1,
  // A^T y - w = c (the last two also correct the residuals of z). False when the
  // normal equations are singular.
  bool direction(const Point& z, const Targets& t, Point& d) {
    const int n = p_.n, nj = p_.nj, nt = p_.nt, m = p_.rows();
    // Residuals of z.
    std::vector<double> rp(m, 1.0);
    for (int i = 0; i < n; ++i) {
      rp[p_.job[i]] -= z.x[i];
      rp[nj + p_.type[i]] -= p_.a[i] * z.x[i];
    }
    for (int r = 0; r < m; ++r) rp[r] -= z.s[r];
    std::vector<double> dd(n), g(n), rhs(m);
    for (int i = 0; i < n; ++i) {
      const double rd = p_.c[i] - z.y[p_.job[i]] - p_.a[i] * z.y[nj + p_.type[i]] + z.w[i];
      dd[i] = z.x[i] / z.w[i];
      g[i] = dd[i] * (rd + t.xw[i] / z.x[i]);
      rhs[p_.job[i]] += g[i];
      rhs[nj + p_.type[i]] += p_.a[i] * g[i];
    }
    for (int r = 0; r < m; ++r) rhs[r] += t.sy[r] / z.y[r] - rp[r];

    // Schur complement on the type rows.
    std::vector<double> schur(nt * nt, 0.0), rhs_t(nt), pivot(nj);
    for (int u = 0; u < nt; ++u) {
      schur[u * nt + u] = z.s[nj + u] / z.y[nj + u];
      rhs_t[u] = rhs[nj + u];
    }
    for (int j = 0; j < nj; ++j) {
      const auto& cols = p_.of_job[j];
      const double e = z.s[j] / z.y[j];
      double total = e;
      for (int i : cols) total += dd[i];
      pivot[j] = total;
      for (int i : cols) {
        double others = e;
        for (int k : cols) others += k == i ? 0.0 : dd[k];
        const int u = p_.type[i];
        schur[u * nt + u] += dd[i] * p_.a[i] * p_.a[i] * (others / total);
        rhs_t[u] -= dd[i] * p_.a[i] * rhs[j] / total;
        for (int k : cols) {
          if (k == i) continue;
          schur[u * nt + p_.type[k]] -= dd[i] * p_.a[i] * dd[k] * p_.a[k] / total;
        }
      }
    }
    std::vector<double> dy_t;
    if (!solve_dense(schur, rhs_t, dy_t)) return false;

    d.x.assign(n, 0.0);
    d.w.assign(n, 0.0);
    d.s.assign(m, 0.0);
    d.y.assign(m, 0.0);
    for (int u = 0; u < nt; ++u) d.y[nj + u] = dy_t[u];
    for (int j = 0; j < nj; ++j) {
      double v = rhs[j];
      for (int i : p_.of_job[j]) v -= dd[i] * p_.a[i] * dy_t[p_.type[i]];
      d.y[j] = v / pivot[j];
    }
    for (int i = 0; i < n; ++i) {
      d.x[i] = g[i] - dd[i] * (d.y[p_.job[i]] + p_.a[i] * d.y[nj + p_.type[i]]);
      d.w[i] = (t.xw[i] - z.w[i] * d.x[i]) / z.x[i];
    }
    for (int r = 0; r < m; ++r) d.s[r] = (t.sy[r] - z.s[r] * d.y[r]) / z.y[r];
    return true;
  }

 private:
  // Gaussian elimination of the symmetric positive definite Schur complement (one row
  // per type), without pivoting. A pivot that keeps less than 1e-12 of its row's diagonal
  // is cancellation noise: it is replaced by a huge number, which sets that direction's
  // component to zero (the small-pivot rule of interior-point codes; Wright, Primal-Dual
  // Interior-Point Methods, SIAM 1997). False when the result is not finite.
  static bool solve_dense(std::vector<double> a, std::vector<double> b, std::vector<double>& x) {
    // LU in place: the multipliers below the diagonal, U on and above it.
    const int n = static_cast<int>(b.size());
    for (int col = 0; col < n; ++col) {
      const double diagonal = a[col * n + col];
      for (int k = 0; k < col; ++k) a[col * n + col] -= a[col * n + k] * a[k * n + col];
      if (!std::isfinite(a[col * n + col])) return false;
      if (!(a[col * n + col] > 1e-12 * diagonal)) a[col * n + col] = 1e128;
      const double pivot = a[col * n + col];
      for (int k = col + 1; k < n; ++k) {
        for (int m = 0; m < col; ++m) a[col * n + k] -= a[col * n + m] * a[m * n + k];
      }
      for (int r = col + 1; r < n; ++r) {
        double v = a[r * n + col];
        for (int m = 0; m < col; ++m) v -= a[r * n + m] * a[m * n + col];
        a[r * n + col] = v / pivot;
      }
    }
    x = b;
    for (int r = 0; r < n; ++r) {
      for (int k = 0; k < r; ++k) x[r] -= a[r * n + k] * x[k];
    }
    for (int r = n - 1; r >= 0; --r) {
      for (int k = r + 1; k < n; ++k) x[r] -= a[r * n + k] * x[k];
      x[r] /= a[r * n + r];
      if (!std::isfinite(x[r])) return false;
    }
    return true;
  }

  const Problem& p_;
};

// The largest step in [0, 1] along d that keeps v + step d >= (1 - kToBoundary) v.
double step_to_boundary(const std::vector<double>& v, const std::vector<double>& d,
                        double limit = 1.0) {
  double step = limit;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (d[i] < 0) step = std::min(step, -kToBoundary * v[i] / d[i]);
  }
  return step;
}

void move(std::vector<double>& v, const std::vector<double>& d, double step) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += step * d[i];
}

double duality_measure(const Point& z) {
  double sum = 0;
  for (std::size_t i = 0; i < z.x.size(); ++i) sum += z.x[i] * z.w[i];
  for (std::size_t r = 0; r < z.s.size(); ++r) sum += z.s[r] * z.y[r];
  return sum / static_cast<double>(z.x.size() + z.s.size());
}

bool finite(const Point& z) {
  auto ok = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double e) { return std::isfinite(e) && e > 0; });
  };
  return ok(z.x) && ok(z.w) && ok(z.s) && ok(z.y);
}

}  // namespace

std::optional<std::vector<double>> central_optimum(const AssignmentLp& lp, double seconds) {
  const auto t0 = Clock::now();
  auto out_of_time = [&] {
    return std::chrono::duration<double>(Clock::now() - t0).count() > seconds;
  };
  Problem p;
  p.n = static_cast<int>(lp.columns.size());
  p.nj = lp.jobs;
  p.nt = static_cast<int>(lp.capacity.size());
  if (p.n == 0) return std::vector<double>{};
  double top = 0;
  for (const auto& col : lp.columns) top = std::max(top, col.value);
  p.of_job.resize(p.nj);
  for (int i = 0; i < p.n; ++i) {
    const auto& col = lp.columns[i];
    p.job.push_back(col.job);
    p.type.push_back(col.type);
    p.a.push_back(col.weight / lp.capacity[col.type]);
    p.c.push_back(top > 0 ? col.value / top : 0.0);
    p.of_job[col.job].push_back(i);
  }

  // A strictly feasible start: every job theta of its time spread evenly over its
  // columns, theta small enough that every type keeps half its capacity; y large enough
  // that every w = A^T y - c is at least 1.
  Point z;
  std::vector<double> load(p.nt, 0.0);
  for (int i = 0; i < p.n; ++i) load[p.type[i]] += p.a[i] / p.of_job[p.job[i]].size();
  double theta = 0.5;
  for (double l : load) {
    if (l > 0) theta = std::min(theta, 0.5 / l);
  }
  z.x.resize(p.n);
  for (int i = 0; i < p.n; ++i) z.x[i] = theta / p.of_job[p.job[i]].size();
  z.s.assign(p.rows(), 1.0);
  for (int i = 0; i < p.n; ++i) {
    z.s[p.job[i]] -= z.x[i];
    z.s[p.nj + p.type[i]] -= p.a[i] * z.x[i];
  }
  z.y.assign(p.rows(), 1.0);
  for (int i = 0; i < p.n; ++i) z.y[p.job[i]] = std::max(z.y[p.job[i]], p.c[i] + 1);
  z.w.resize(p.n);
  for (int i = 0; i < p.n; ++i) {
    z.w[i] = z.y[p.job[i]] + p.a[i] * z.y[p.nj + p.type[i]] - p.c[i];
  }

  Newton newton(p);
  Targets t;
  Point d, aff;
  int steps = 0;
  // Mehrotra's predictor-corrector.
  for (;;) {
    const double mu = duality_measure(z);
    if (mu < kSwitchMu) break;
    if (++steps > kMaxSteps || out_of_time()) return std::nullopt;
    t.xw.resize(p.n);
    t.sy.resize(p.rows());
    for (int i = 0; i < p.n; ++i) t.xw[i] = -z.x[i] * z.w[i];
    for (int r = 0; r < p.rows(); ++r) t.sy[r] = -z.s[r] * z.y[r];
    if (!newton.direction(z, t, aff)) return std::nullopt;
    const double ap = std::min(step_to_boundary(z.x, aff.x), step_to_boundary(z.s, aff.s));
    const double ad = std::min(step_to_boundary(z.w, aff.w), step_to_boundary(z.y, aff.y));
    double mu_aff = 0;
    for (int i = 0; i < p.n; ++i) mu_aff += (z.x[i] + ap * aff.x[i]) * (z.w[i] + ad * aff.w[i]);
    for (int r = 0; r < p.rows(); ++r) {
      mu_aff += (z.s[r] + ap * aff.s[r]) * (z.y[r] + ad * aff.y[r]);
    }
    mu_aff /= p.n + p.rows();
    const double sigma = std::pow(std::clamp(mu_aff / mu, 0.0, 1.0), 3);
    for (int i = 0; i < p.n; ++i) {
      t.xw[i] = sigma * mu - z.x[i] * z.w[i] - aff.x[i] * aff.w[i];
    }
    for (int r = 0; r < p.rows(); ++r) {
      t.sy[r] = sigma * mu - z.s[r] * z.y[r] - aff.s[r] * aff.y[r];
    }
    if (!newton.direction(z, t, d)) return std::nullopt;
    const double sp = std::min(step_to_boundary(z.x, d.x), step_to_boundary(z.s, d.s));
    const double sd = std::min(step_to_boundary(z.w, d.w), step_to_boundary(z.y, d.y));
    move(z.x, d.x, sp);
    move(z.s, d.s, sp);
    move(z.w, d.w, sd);
    move(z.y, d.y, sd);
    if (!finite(z)) return std::nullopt;
  }

  // Down the central path: Newton steps towards x w = s y = target, the target shrinking
  // once the point is close to it, until the final target is reached closely.
  double target = duality_measure(z);
  std::optional<std::vector<double>> near;  // the last x close to the path at <= kEnoughMu
  auto stuck = [&] { return near; };
  for (;;) {
    double worst = 0;
    for (int i = 0; i < p.n; ++i) worst = std::max(worst, std::abs(z.x[i] * z.w[i] / target - 1));
    for (int r = 0; r < p.rows(); ++r) {
      worst = std::max(worst, std::abs(z.s[r] * z.y[r] / target - 1));
    }
    if (worst < 0.25) {
      if (target <= kEnoughMu) near = z.x;
      if (target <= kFinalMu && worst < 1e-3) break;
      if (target > kFinalMu) target = std::max(kFinalMu, target * kShrink);
    }
    if (++steps > kMaxSteps || out_of_time()) return stuck();
    t.xw.assign(p.n, 0.0);
    t.sy.assign(p.rows(), 0.0);
    for (int i = 0; i < p.n; ++i) t.xw[i] = target - z.x[i] * z.w[i];
    for (int r = 0; r < p.rows(); ++r) t.sy[r] = target - z.s[r] * z.y[r];
    if (!newton.direction(z, t, d)) return stuck();
    double step = step_to_boundary(z.x, d.x);
    step = step_to_boundary(z.s, d.s, step);
    step = step_to_boundary(z.w, d.w, step);
    step = step_to_boundary(z.y, d.y, step);
    move(z.x, d.x, step);
    move(z.s, d.s, step);
    move(z.w, d.w, step);
    move(z.y, d.y, step);
    if (!finite(z)) return stuck();
  }
  return z.x;
}

}  // namespace sia::baseline
