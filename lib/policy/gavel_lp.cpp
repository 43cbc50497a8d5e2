// The baselines' linear programs (declared in gavel_common.hpp), solved with GLPK's primal
// simplex. Columns are the (job, option) pairs; rows are, in order, one per job
// (sum_k x_jk <= 1), one per GPU type (sum gpus x <= capacity) and, for the FTF LP, one
// per job for its progress rate (A_j(x) >= bound).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include <glpk.h>

#include "policy/gavel_common.hpp"
#include "policy/glpk_limits.hpp"
#include "policy/interior_point.hpp"

namespace sia::baseline {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double round5(double v) {
  return std::clamp(std::round(v * 1e5) / 1e5, 0.0, 1.0);
}

// A GLPK problem over the jobs' options, owning the glp_prob.
class OptionLp {
 public:
  // `rate_rows`: add one row per job for sum_k rate(j, k) x_jk (bounds set later).
  template <class Rate>
  OptionLp(const std::vector<Job>& jobs, const Cluster& cluster, bool rate_rows, Rate rate)
      : jobs_(jobs) {
    glp_term_out(GLP_OFF);  // GLPK prints to stdout otherwise, which carries our document
    lp_ = glp_create_prob();
    glp_set_obj_dir(lp_, GLP_MAX);
    const int nj = static_cast<int>(jobs.size());
    const int nt = static_cast<int>(cluster.types.size());
    glp_add_rows(lp_, nj + nt + (rate_rows ? nj : 0));
    for (int j = 0; j < nj; ++j) glp_set_row_bnds(lp_, j + 1, GLP_UP, 0, 1);
    for (int t = 0; t < nt; ++t) {
      glp_set_row_bnds(lp_, nj + t + 1, GLP_UP, 0, cluster.types[t].capacity());
    }
    rate_row0_ = nj + nt + 1;
    for (int j = 0; rate_rows && j < nj; ++j) glp_set_row_bnds(lp_, rate_row0_ + j, GLP_FR, 0, 0);
    std::vector<int> ia(1), ja(1);
    std::vector<double> ar(1);
    auto put = [&](int row, int col, double v) {
      ia.push_back(row);
      ja.push_back(col);
      ar.push_back(v);
    };
    first_col_.assign(nj + 1, 1);
    int col = 0;
    for (int j = 0; j < nj; ++j) {
      first_col_[j] = col + 1;
      for (std::size_t k = 0; k < jobs[j].options.size(); ++k) {
        const Option& o = jobs[j].options[k];
        ++col;
        put(j + 1, col, 1.0);
        put(nj + o.type + 1, col, o.gpus);
        if (rate_rows) put(rate_row0_ + j, col, rate(j, k));
      }
    }
    first_col_[nj] = col + 1;
    if (col > 0) {
      glp_add_cols(lp_, col);
      for (int c = 1; c <= col; ++c) glp_set_col_bnds(lp_, c, GLP_LO, 0, 0);
      glp_load_matrix(lp_, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
    }
    cols_ = col;
  }
  OptionLp(const OptionLp&) = delete;
  OptionLp& operator=(const OptionLp&) = delete;
  ~OptionLp() { glp_delete_prob(lp_); }

  void set_objective(int j, int k, double v) { glp_set_obj_coef(lp_, first_col_[j] + k, v); }
  void set_rate_lower_bound(int j, double v) {
    if (v > 0) {
      glp_set_row_bnds(lp_, rate_row0_ + j, GLP_LO, v, 0);
    } else {
      glp_set_row_bnds(lp_, rate_row0_ + j, GLP_FR, 0, 0);
    }
  }

  // GLP_OPT, GLP_NOFEAS, GLP_UNBND...; -1 when the solver gave up (time limit, trouble).
  int solve(double seconds, const SolveLimits& limits) {
    if (cols_ == 0) return GLP_OPT;
    glp_smcp smcp;
    glp_init_smcp(&smcp);
    smcp.msg_lev = GLP_MSG_OFF;
    smcp.presolve = GLP_OFF;  // keep the basis between solves
    set_simplex_limits(smcp, seconds, limits);
    if (!scaled_) {
      glp_scale_prob(lp_, GLP_SF_AUTO);
      glp_adv_basis(lp_, 0);
      scaled_ = true;
    }
    int rc = glp_simplex(lp_, &smcp);
    if (rc != 0) {
      // A basis gone singular on a warm start: once more from scratch.
      if (rc == GLP_ESING || rc == GLP_ECOND || rc == GLP_EBADB) {
        glp_adv_basis(lp_, 0);
        rc = glp_simplex(lp_, &smcp);
      }
      if (rc != 0) return -1;
    }
    return glp_get_status(lp_);
  }

  std::vector<std::vector<double>> values() const {
    std::vector<std::vector<double>> x(jobs_.size());
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      for (std::size_t k = 0; k < jobs_[j].options.size(); ++k) {
        x[j].push_back(round5(glp_get_col_prim(lp_, first_col_[j] + static_cast<int>(k))));
      }
    }
    return x;
  }
  double objective() const { return cols_ ? glp_get_obj_val(lp_) : 0; }

 private:
  const std::vector<Job>& jobs_;
  glp_prob* lp_ = nullptr;
  std::vector<int> first_col_;
  int rate_row0_ = 0;
  int cols_ = 0;
  bool scaled_ = false;
};

// The isolated allocation: each job 1/m of every type it can use, as a gang-count
// fraction, the row scaled down to sum to at most 1.
std::vector<std::vector<double>> isolated(const std::vector<Job>& jobs, const Cluster& cluster) {
  int m = 0;
  for (const auto& j : jobs) m += !j.options.empty();
  std::vector<std::vector<double>> x(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    double sum = 0;
    for (const auto& o : jobs[j].options) {
      x[j].push_back(static_cast<double>(cluster.types[o.type].capacity()) / m / o.gpus);
      sum += x[j].back();
    }
    if (sum > 1) {
      for (auto& v : x[j]) v /= sum;
    }
  }
  return x;
}

// The analytic centre of the throughput LP's optimal face, rounded as values() rounds;
// nullopt when the interior point did not converge or its objective falls short of the
// simplex's `optimum` (it never should by more than its tolerance).
std::optional<std::vector<std::vector<double>>> centre_of_optimum(const std::vector<Job>& jobs,
                                                                  const Cluster& cluster,
                                                                  double optimum, double seconds) {
  AssignmentLp lp;
  lp.jobs = static_cast<int>(jobs.size());
  for (const auto& t : cluster.types) lp.capacity.push_back(t.capacity());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (const auto& o : jobs[j].options) {
      lp.columns.push_back({static_cast<int>(j), o.type, static_cast<double>(o.gpus), o.rate});
    }
  }
  auto flat = central_optimum(lp, seconds);
  if (!flat) return std::nullopt;
  double value = 0;
  for (std::size_t i = 0; i < flat->size(); ++i) value += lp.columns[i].value * (*flat)[i];
  if (value < optimum * (1 - 1e-6) - 1e-9) return std::nullopt;
  std::vector<std::vector<double>> x(jobs.size());
  std::size_t i = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (std::size_t k = 0; k < jobs[j].options.size(); ++k) x[j].push_back(round5((*flat)[i++]));
  }
  return x;
}

}  // namespace

LpResult max_sum_throughput(const std::vector<Job>& jobs, const Cluster& cluster,
                            const SolveLimits& limits, bool centre) {
  const double time_limit = limits.seconds;
  OptionLp lp(jobs, cluster, false, [](int, std::size_t) { return 0.0; });
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (std::size_t k = 0; k < jobs[j].options.size(); ++k) {
      lp.set_objective(static_cast<int>(j), static_cast<int>(k), jobs[j].options[k].rate);
    }
  }
  const auto t0 = Clock::now();
  LpResult r;
  int st = lp.solve(time_limit, limits);
  if (st == GLP_OPT) {
    r.status = "optimal";
    r.x = lp.values();
    if (centre) {
      if (auto x = centre_of_optimum(jobs, cluster, lp.objective(),
                                     std::max(1e-3, time_limit - seconds_since(t0)))) {
        r.x = std::move(*x);
      } else {
        r.note = "the interior point did not converge; the simplex vertex is used";
      }
    }
  } else {
    // x = 0 is always feasible; without an answer every job gets priority 0, which still
    // fills the cluster greedily.
    r.status = "time-limit";
    r.note = "the throughput LP was not solved; jobs are packed greedily";
    r.x.resize(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) r.x[j].assign(jobs[j].options.size(), 0.0);
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (std::size_t k = 0; k < jobs[j].options.size(); ++k) {
      r.objective += jobs[j].options[k].rate * r.x[j][k];
    }
  }
  return r;
}

LpResult min_max_finish_time_fairness(const std::vector<Job>& jobs, const GoodputMatrix& m,
                                      double round, const SolveLimits& limits) {
  const double time_limit = limits.seconds;
  const auto t0 = Clock::now();
  const std::size_t n = jobs.size();
  const auto x_iso = isolated(jobs, m.cluster);
  // Per job: the rates used (progress rates when the job's progress is known), the
  // isolated rate, the denominator D and what the ratio needs.
  struct Term {
    bool active = false;    // has options
    bool progress = false;  // rho = (age + remaining / A) / D; else rho = A_iso / A
    double iso = 0;         // A(x_iso)
    double age = 0, remaining = 0, d = 1;
  };
  std::vector<Term> terms(n);
  std::vector<std::vector<double>> rates(n);
  double lo = 0;  // rho must exceed every age / D
  for (std::size_t j = 0; j < n; ++j) {
    const Job& job = jobs[j];
    const GoodputRow& row = m.jobs[job.row];
    Term& t = terms[j];
    t.active = !job.options.empty();
    if (!t.active) continue;
    bool known = row.progress && row.progress->total > 0;
    for (const auto& o : job.options) known &= o.progress_rate > 0;
    t.progress = known;
    for (std::size_t k = 0; k < job.options.size(); ++k) {
      rates[j].push_back(known ? job.options[k].progress_rate : job.options[k].rate);
      t.iso += rates[j][k] * x_iso[j][k];
    }
    if (known) {
      // Sia's denominator: the wait until the first round after submission plus one
      // start-up, then the whole job at the isolated rate.
      double since = std::fmod(-row.age, round);
      if (since < 0) since += round;
      const double prestart = round - since + row.restart_penalty;
      t.age = row.age;
      t.remaining = std::max(0.0, row.progress->total - row.progress->done);
      t.d = prestart + row.progress->total / t.iso;
      if (t.remaining > 0) lo = std::max(lo, t.age / t.d);
    }
  }
  auto rho_of = [&](const std::vector<std::vector<double>>& x) {
    double worst = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const Term& t = terms[j];
      if (!t.active) continue;
      double a = 0;
      for (std::size_t k = 0; k < x[j].size(); ++k) a += rates[j][k] * x[j][k];
      double rho;
      if (t.progress) {
        if (t.remaining <= 0) continue;
        rho = a > 0 ? (t.age + t.remaining / a) / t.d : std::numeric_limits<double>::infinity();
      } else {
        rho = a > 0 ? t.iso / a : std::numeric_limits<double>::infinity();
      }
      worst = std::max(worst, rho);
    }
    return worst;
  };

  OptionLp lp(jobs, m.cluster, true, [&](int j, std::size_t k) { return rates[j][k]; });
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t k = 0; k < jobs[j].options.size(); ++k) {
      lp.set_objective(static_cast<int>(j), static_cast<int>(k), rates[j][k] / terms[j].iso);
    }
  }
  // The bounds A_j(x) >= need_j(rho); false when rho is below what ages allow.
  auto set_rho = [&](double rho) {
    for (std::size_t j = 0; j < n; ++j) {
      const Term& t = terms[j];
      if (!t.active) continue;
      double need = 0;
      if (t.progress) {
        if (t.remaining > 0) {
          const double slack = rho * t.d - t.age;
          if (!(slack > 0)) return false;
          need = t.remaining / slack;
        }
      } else {
        need = t.iso / rho;
      }
      lp.set_rate_lower_bound(static_cast<int>(j), need);
    }
    return true;
  };

  LpResult r;
  const double rho_iso = rho_of(x_iso);
  double hi = rho_iso * (1 + 1e-9);
  bool have = false, gave_up = false;
  if (std::isfinite(hi) && hi > 0 && set_rho(hi)) {
    int st = lp.solve(std::max(1e-3, time_limit - seconds_since(t0)), limits);
    if (st == GLP_OPT) {
      have = true;
      r.x = lp.values();
    } else {
      gave_up = st < 0;
    }
  }
  if (!have) {
    r.x = x_iso;
    for (auto& row : r.x) {
      for (auto& v : row) v = round5(v);
    }
    r.status = gave_up ? "time-limit" : "infeasible";
    r.note = "the finish-time-fairness LP found no solution: the isolated allocation is used";
    r.objective = rho_of(r.x);
    if (!std::isfinite(r.objective)) r.objective = 0;
    return r;
  }
  // Bisection on rho between what the ages allow and the isolated allocation's rho.
  r.status = "optimal";
  for (int it = 0; it < 100 && hi - lo > 1e-7 * hi; ++it) {
    if (seconds_since(t0) > time_limit) {
      r.status = "time-limit";
      break;
    }
    const double mid = 0.5 * (lo + hi);
    if (!set_rho(mid)) {
      lo = mid;
      continue;
    }
    int st = lp.solve(std::max(1e-3, time_limit - seconds_since(t0)), limits);
    if (st == GLP_OPT) {
      hi = mid;
      r.x = lp.values();
    } else if (st == GLP_NOFEAS || st == GLP_INFEAS) {
      lo = mid;
    } else {
      r.status = "time-limit";
      break;
    }
  }
  r.objective = rho_of(r.x);
  if (!std::isfinite(r.objective)) r.objective = hi;
  return r;
}

}  // namespace sia::baseline
