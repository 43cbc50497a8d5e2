#include "policy/mckp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include <cstdio>
#include <cstdlib>

#include <glpk.h>

#include "policy/glpk_limits.hpp"

namespace sia {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double relative_gap(double value, double bound) {
  return std::max(0.0, bound - value) / std::max(std::fabs(value), 1e-9);
}

// The free part of the problem: forced jobs removed, capacities reduced, dominated and
// oversized choices dropped. `index` maps back to the original choice numbers.
struct Reduced {
  std::vector<double> capacity;
  std::vector<int> job;  // original job of each free job
  std::vector<std::vector<const MckpChoice*>> choices;
  std::vector<std::vector<int>> total;  // each choice's usage summed over the rows
  std::vector<std::vector<int>> index;
  double forced_value = 0;
  bool forced_feasible = true;

  void add_job(int original, std::vector<const MckpChoice*> cs, std::vector<int> idx) {
    std::vector<int> sum;
    sum.reserve(cs.size());
    for (const MckpChoice* c : cs) {
      int use = 0;
      for (auto [row, amount] : c->usage) use += amount;
      sum.push_back(use);
    }
    job.push_back(original);
    choices.push_back(std::move(cs));
    total.push_back(std::move(sum));
    index.push_back(std::move(idx));
  }
};

Reduced reduce(const MckpProblem& p) {
  Reduced r;
  r.capacity = p.capacity;
  const std::size_t n = p.jobs.size();
  for (std::size_t j = 0; j < n; ++j) {
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0) {
      const MckpChoice& c = p.jobs[j][f];
      r.forced_value += c.value;
      for (auto [row, amount] : c.usage) r.capacity[row] -= amount;
    }
  }
  for (double c : r.capacity) {
    if (c < -1e-9) r.forced_feasible = false;
  }
  for (std::size_t j = 0; j < n; ++j) {
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0) continue;
    std::vector<const MckpChoice*> cs;
    std::vector<int> idx;
    for (std::size_t k = 0; k < p.jobs[j].size(); ++k) {
      const MckpChoice& c = p.jobs[j][k];
      if (!(c.value > 0)) continue;  // never better than waiting
      bool fits = true;
      for (auto [row, amount] : c.usage) fits &= amount <= r.capacity[row] + 1e-9;
      if (!fits) continue;
      cs.push_back(&c);
      idx.push_back(static_cast<int>(k));
    }
    if (cs.empty()) continue;
    r.add_job(static_cast<int>(j), std::move(cs), std::move(idx));
  }
  return r;
}

double reduced_cost(const MckpChoice& c, const std::vector<double>& price) {
  double v = c.value;
  for (auto [row, amount] : c.usage) v -= price[row] * amount;
  return v;
}

int usage_on(const MckpChoice& c, int row) {
  for (auto [r, amount] : c.usage) {
    if (r == row) return amount;
  }
  return 0;
}

// Dual value L(price) and each job's best local pick (-1 = none); with `demand`, the usage
// of every row by those picks (the subgradient of L is capacity - demand).
double dual(const Reduced& r, const std::vector<double>& price, std::vector<int>* pick,
            std::vector<double>* demand = nullptr) {
  double l = 0;
  for (std::size_t k = 0; k < price.size(); ++k) l += price[k] * r.capacity[k];
  for (std::size_t j = 0; j < r.choices.size(); ++j) {
    double best = 0;
    int arg = -1;
    int arg_use = 0;
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
      const MckpChoice& ch = *r.choices[j][c];
      double v = reduced_cost(ch, price);
      const int use = r.total[j][c];
      // Ties go to the smaller choice: it leaves room for others.
      if (v > best + 1e-12 || (arg >= 0 && std::fabs(v - best) <= 1e-12 && use < arg_use)) {
        best = v;
        arg = static_cast<int>(c);
        arg_use = use;
      }
    }
    l += best;
    if (pick) (*pick)[j] = arg;
    if (demand && arg >= 0) {
      for (auto [row, amount] : r.choices[j][arg]->usage) (*demand)[row] += amount;
    }
  }
  return l;
}

// Minimises L along price + s * dir (s >= 0, prices kept >= 0): the coordinate sweeps
// move all prices up together in small steps; one long step along their common direction
// (a pattern move) saves most of the sweeps. Returns the best L found and updates price.
double pattern_move(const Reduced& r, std::vector<double>& price, const std::vector<double>& dir,
                    double current) {
  const int rows = static_cast<int>(price.size());
  auto at = [&](double step, std::vector<double>& p) {
    for (int k = 0; k < rows; ++k) p[k] = std::max(0.0, price[k] + step * dir[k]);
  };
  std::vector<double> demand(rows);
  auto slope = [&](const std::vector<double>& p, double* value) {
    std::fill(demand.begin(), demand.end(), 0.0);
    *value = dual(r, p, nullptr, &demand);
    double d = 0;
    for (int k = 0; k < rows; ++k) d += dir[k] * (r.capacity[k] - demand[k]);
    return d;
  };
  std::vector<double> p(rows);
  double lo = 0, hi = 1, v = 0;
  at(hi, p);
  // Expand while L still falls.
  int guard = 0;
  while (slope(p, &v) < 0 && guard++ < 30) {
    lo = hi;
    hi *= 2;
    at(hi, p);
  }
  for (int it = 0; it < 16; ++it) {
    double mid = 0.5 * (lo + hi);
    at(mid, p);
    if (slope(p, &v) < 0) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  double best = current;
  for (double step : {lo, hi}) {
    at(step, p);
    double l = dual(r, p, nullptr);
    if (l < best) {
      best = l;
      std::vector<double> keep = p;
      price.swap(keep);
      break;
    }
  }
  return best;
}

// Exact minimisation of L along one row's price: the smallest price at which the jobs'
// demand for the row no longer exceeds its capacity.
double clearing_price(const Reduced& r, const std::vector<double>& price, int row) {
  struct Event {
    double at;
    int drop;
  };
  std::vector<Event> events;
  long long demand = 0;
  for (std::size_t j = 0; j < r.choices.size(); ++j) {
    // Flat line: the best choice that does not use the row (or none).
    double flat = 0;
    struct Line {
      double w;
      int u;
    };
    std::vector<Line> lines;
    for (const MckpChoice* ch : r.choices[j]) {
      int u = usage_on(*ch, row);
      double rest = ch->value;
      for (auto [rr, amount] : ch->usage) {
        if (rr != row) rest -= price[rr] * amount;
      }
      if (u == 0) {
        flat = std::max(flat, rest);
      } else {
        lines.push_back({rest, u});
      }
    }
    if (lines.empty()) continue;
    // Upper envelope for lambda >= 0, walking from 0 upwards.
    double lambda = 0;
    int cur = -1;  // -1: flat
    double cur_v = flat;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      double v = lines[i].w;
      if (v > cur_v + 1e-12 ||
          (cur >= 0 && std::fabs(v - cur_v) <= 1e-12 && lines[i].u < lines[cur].u)) {
        cur = static_cast<int>(i);
        cur_v = v;
      }
    }
    if (cur < 0) continue;
    demand += lines[cur].u;
    while (cur >= 0) {
      // Next line (less steep, or flat) to overtake the current one.
      double best_at = std::numeric_limits<double>::infinity();
      int next = -2;
      const Line& c = lines[cur];
      // Flat line: w_c - u_c * x = flat.
      {
        double x = (c.w - flat) / c.u;
        if (x >= lambda - 1e-15 && x < best_at) {
          best_at = x;
          next = -1;
        }
      }
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].u >= c.u) continue;
        double x = (c.w - lines[i].w) / (c.u - lines[i].u);
        if (x < lambda - 1e-15) continue;
        if (x < best_at - 1e-15 ||
            (std::fabs(x - best_at) <= 1e-15 && next >= 0 && lines[i].u < lines[next].u)) {
          best_at = x;
          next = static_cast<int>(i);
        }
      }
      if (next == -2) break;
      int drop = c.u - (next >= 0 ? lines[next].u : 0);
      events.push_back({std::max(best_at, 0.0), drop});
      lambda = std::max(best_at, lambda);
      cur = next;
    }
  }
  const double cap = r.capacity[row];
  if (demand <= cap + 1e-9) return 0;
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.at < b.at; });
  for (const auto& e : events) {
    demand -= e.drop;
    if (demand <= cap + 1e-9) return e.at;
  }
  return events.empty() ? 0 : events.back().at;
}

struct Heuristic {
  std::vector<int> pick;  // per free job: local choice or -1
  std::vector<double> price;
  double bound = 0;
};

Heuristic lagrangian(const Reduced& r, Clock::time_point t0, double budget) {
  const int rows = static_cast<int>(r.capacity.size());
  Heuristic h;
  std::vector<double> price(rows, 0.0);
  double best = dual(r, price, nullptr);
  std::vector<double> best_price = price;
  for (int sweep = 0; sweep < 30; ++sweep) {
    double before = best;
    std::vector<double> start = price;
    for (int row = 0; row < rows; ++row) {
      price[row] = clearing_price(r, price, row);
      double l = dual(r, price, nullptr);
      if (l < best) {
        best = l;
        best_price = price;
      }
    }
    if (rows > 1) {
      std::vector<double> dir(rows);
      for (int k = 0; k < rows; ++k) dir[k] = price[k] - start[k];
      double l = pattern_move(r, price, dir, dual(r, price, nullptr));
      if (l < best) {
        best = l;
        best_price = price;
      }
    }
    if (before - best <= 1e-6 * std::max(1.0, std::fabs(best))) break;
    if (seconds_since(t0) > budget * 0.25) break;
  }
  h.bound = best;
  h.price = best_price;
  // Primal: picks just above the clearing prices, then repair and improve.
  std::vector<double> up = best_price;
  for (auto& p : up) p = p * (1 + 1e-9) + 1e-12;
  h.pick.assign(r.choices.size(), -1);
  dual(r, up, &h.pick);
  return h;
}

// Makes `pick` feasible (dropping or shrinking the least valuable per unit freed), then
// upgrades jobs greedily into the room left.
void repair_and_improve(const Reduced& r, std::vector<int>& pick) {
  const int rows = static_cast<int>(r.capacity.size());
  std::vector<double> used(rows, 0.0);
  auto apply = [&](int j, int c, int sign) {
    if (c < 0) return;
    for (auto [row, amount] : r.choices[j][c]->usage) used[row] += sign * amount;
  };
  for (std::size_t j = 0; j < pick.size(); ++j) apply(static_cast<int>(j), pick[j], +1);
  for (int guard = 0; guard < 100000; ++guard) {
    int worst = -1;
    double over = 1e-9;
    for (int row = 0; row < rows; ++row) {
      if (used[row] - r.capacity[row] > over) {
        over = used[row] - r.capacity[row];
        worst = row;
      }
    }
    if (worst < 0) break;
    // The cheapest move that frees room on `worst` without adding to another overfull row.
    int bj = -1, bc = -1;
    double best_ratio = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < pick.size(); ++j) {
      int cur = pick[j];
      if (cur < 0) continue;
      const MckpChoice& cc = *r.choices[j][cur];
      int u = usage_on(cc, worst);
      if (u == 0) continue;
      for (int alt = -1; alt < static_cast<int>(r.choices[j].size()); ++alt) {
        if (alt == cur) continue;
        int ua = alt >= 0 ? usage_on(*r.choices[j][alt], worst) : 0;
        if (ua >= u) continue;
        bool ok = true;
        if (alt >= 0) {
          for (auto [row, amount] : r.choices[j][alt]->usage) {
            if (row == worst) continue;
            double after = used[row] - usage_on(cc, row) + amount;
            if (after > r.capacity[row] + 1e-9) ok = false;
          }
        }
        if (!ok) continue;
        double loss = cc.value - (alt >= 0 ? r.choices[j][alt]->value : 0);
        double ratio = loss / (u - ua);
        if (ratio < best_ratio) {
          best_ratio = ratio;
          bj = static_cast<int>(j);
          bc = alt;
        }
      }
    }
    if (bj < 0) break;
    apply(bj, pick[bj], -1);
    pick[bj] = bc;
    apply(bj, bc, +1);
  }
  // Greedy upgrades, largest gain first, until none fits.
  for (int pass = 0; pass < 4; ++pass) {
    struct Up {
      double gain;
      int job;
      int choice;
    };
    std::vector<Up> ups;
    for (std::size_t j = 0; j < pick.size(); ++j) {
      int cur = pick[j];
      double cur_v = cur >= 0 ? r.choices[j][cur]->value : 0;
      for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
        double g = r.choices[j][c]->value - cur_v;
        if (g > 1e-12) ups.push_back({g, static_cast<int>(j), static_cast<int>(c)});
      }
    }
    if (ups.empty()) break;
    std::sort(ups.begin(), ups.end(), [](const Up& a, const Up& b) {
      if (a.gain != b.gain) return a.gain > b.gain;
      return a.job < b.job;
    });
    bool changed = false;
    for (const auto& u : ups) {
      int cur = pick[u.job];
      double cur_v = cur >= 0 ? r.choices[u.job][cur]->value : 0;
      if (r.choices[u.job][u.choice]->value - cur_v <= 1e-12) continue;
      bool fits = true;
      for (auto [row, amount] : r.choices[u.job][u.choice]->usage) {
        double freed = cur >= 0 ? usage_on(*r.choices[u.job][cur], row) : 0;
        if (used[row] - freed + amount > r.capacity[row] + 1e-9) fits = false;
      }
      if (!fits) continue;
      apply(u.job, cur, -1);
      pick[u.job] = u.choice;
      apply(u.job, u.choice, +1);
      changed = true;
    }
    if (!changed) break;
  }
}

// Re-optimises the picks row by row: the jobs whose pick uses only row `row` (and the
// waiting jobs that have choices there) are re-packed exactly by dynamic programming over
// the row's capacity (a one-row multiple-choice knapsack), keeping every other job as is.
// Rows shared within a choice (size-class rows) are left to the greedy passes.
void repack_rows(const Reduced& r, std::vector<int>& pick, const std::vector<double>& price) {
  const int rows = static_cast<int>(r.capacity.size());
  const int njobs = static_cast<int>(pick.size());
  auto single_row = [&](const MckpChoice& c, int row) {
    return c.usage.size() == 1 && c.usage[0].first == row;
  };
  for (int row = 0; row < rows; ++row) {
    const int cap = static_cast<int>(std::floor(r.capacity[row] + 1e-9));
    if (cap <= 0 || cap > 1 << 16) continue;
    // Members: jobs on this row now, and waiting jobs whose best choice at the current
    // prices is on this row.
    std::vector<int> members;
    bool ok = true;
    for (int j = 0; j < njobs && ok; ++j) {
      int c = pick[j];
      if (c >= 0) {
        const MckpChoice& ch = *r.choices[j][c];
        if (usage_on(ch, row) == 0) continue;
        if (!single_row(ch, row)) ok = false;
        members.push_back(j);
      } else {
        double best = 0;
        int arg = -1;
        for (std::size_t k = 0; k < r.choices[j].size(); ++k) {
          double v = reduced_cost(*r.choices[j][k], price);
          if (v > best || arg < 0) {
            best = v;
            arg = static_cast<int>(k);
          }
        }
        if (arg >= 0 && single_row(*r.choices[j][arg], row)) members.push_back(j);
      }
    }
    if (!ok || members.empty()) continue;
    // dp[c]: best value within capacity c; choice[m][c]: what member m took.
    const double neg = -std::numeric_limits<double>::infinity();
    std::vector<double> dp(cap + 1, 0.0), next(cap + 1);
    std::vector<std::vector<signed char>> take(members.size(),
                                               std::vector<signed char>(cap + 1, -1));
    std::vector<std::vector<int>> opts(members.size());
    for (std::size_t m = 0; m < members.size(); ++m) {
      int j = members[m];
      for (std::size_t k = 0; k < r.choices[j].size() && k < 127; ++k) {
        if (single_row(*r.choices[j][k], row)) opts[m].push_back(static_cast<int>(k));
      }
      for (int c = 0; c <= cap; ++c) {
        double best = dp[c];
        signed char arg = -1;
        for (int k : opts[m]) {
          const MckpChoice& ch = *r.choices[j][k];
          int w = ch.usage[0].second;
          if (w > c) continue;
          double v = dp[c - w] + ch.value;
          if (v > best + 1e-12) {
            best = v;
            arg = static_cast<signed char>(k);
          }
        }
        next[c] = best;
        take[m][c] = arg;
      }
      std::swap(dp, next);
    }
    (void)neg;
    // Only accept if it beats what these members hold now.
    double now = 0;
    for (int j : members) {
      if (pick[j] >= 0) now += r.choices[j][pick[j]]->value;
    }
    if (dp[cap] <= now + 1e-12) continue;
    int c = cap;
    for (int m = static_cast<int>(members.size()) - 1; m >= 0; --m) {
      int k = take[m][c];
      pick[members[m]] = k;
      if (k >= 0) c -= r.choices[members[m]][k]->usage[0].second;
    }
  }
}

double reduced_value(const Reduced& r, const std::vector<int>& pick) {
  double v = r.forced_value;
  for (std::size_t j = 0; j < pick.size(); ++j) {
    if (pick[j] >= 0) v += r.choices[j][pick[j]]->value;
  }
  return v;
}

// GLPK model of a reduced problem: one binary column per (job, choice), a row per job
// (at most one choice) and one per capacity row.
struct GlpkModel {
  glp_prob* lp = nullptr;
  std::vector<int> col_job, col_choice;
  GlpkModel() = default;
  GlpkModel(const GlpkModel&) = delete;
  GlpkModel& operator=(const GlpkModel&) = delete;
  ~GlpkModel() {
    if (lp) glp_delete_prob(lp);
  }
};

void build_model(const Reduced& r, GlpkModel& m) {
  glp_term_out(GLP_OFF);  // GLPK prints to stdout otherwise, which carries our document
  m.lp = glp_create_prob();
  glp_set_obj_dir(m.lp, GLP_MAX);
  const int njobs = static_cast<int>(r.choices.size());
  const int rows = static_cast<int>(r.capacity.size());
  glp_add_rows(m.lp, njobs + rows);
  for (int j = 0; j < njobs; ++j) glp_set_row_bnds(m.lp, j + 1, GLP_UP, 0, 1);
  for (int k = 0; k < rows; ++k) {
    glp_set_row_bnds(m.lp, njobs + k + 1, GLP_UP, 0, std::max(0.0, r.capacity[k]));
  }
  for (int j = 0; j < njobs; ++j) {
    for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
      m.col_job.push_back(j);
      m.col_choice.push_back(static_cast<int>(c));
    }
  }
  const int ncols = static_cast<int>(m.col_job.size());
  glp_add_cols(m.lp, ncols);
  std::vector<int> ia(1), ja(1);
  std::vector<double> ar(1);
  for (int i = 0; i < ncols; ++i) {
    const MckpChoice& ch = *r.choices[m.col_job[i]][m.col_choice[i]];
    glp_set_col_kind(m.lp, i + 1, GLP_BV);
    glp_set_obj_coef(m.lp, i + 1, ch.value);
    ia.push_back(m.col_job[i] + 1);
    ja.push_back(i + 1);
    ar.push_back(1.0);
    for (auto [row, amount] : ch.usage) {
      ia.push_back(njobs + row + 1);
      ja.push_back(i + 1);
      ar.push_back(amount);
    }
  }
  glp_load_matrix(m.lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
}

bool solve_lp(GlpkModel& m, double seconds, const SolveLimits& limits) {
  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = GLP_MSG_OFF;
  set_simplex_limits(smcp, seconds, limits);
  glp_adv_basis(m.lp, 0);
  return glp_simplex(m.lp, &smcp) == 0 && glp_get_status(m.lp) == GLP_OPT;
}

struct CallbackData {
  const std::vector<double>* start;
  NodeLimit nodes;
  bool given = false;
};

void glpk_callback(glp_tree* tree, void* info) {
  auto* d = static_cast<CallbackData*>(info);
  d->nodes.on(tree);
  if (glp_ios_reason(tree) == GLP_IHEUR && !d->given) {
    d->given = true;
    glp_ios_heur_sol(tree, d->start->data());
  }
}

struct BranchResult {
  bool found = false;
  bool optimal = false;     // proved within the gap
  bool node_limit = false;  // stopped at limits.nodes
  std::vector<int> pick;
  double value = 0;
  double bound = std::numeric_limits<double>::infinity();
};

// Branch and cut on the whole reduced problem, from `incumbent`, within `seconds` and
// limits.nodes nodes. `solved`: the problem's model with its LP relaxation already solved
// (what building and solving it here would give; consumed), else null.
BranchResult branch_and_cut(const Reduced& r, const std::vector<int>& incumbent, double gap,
                            double seconds, const SolveLimits& limits,
                            std::unique_ptr<GlpkModel> solved = nullptr) {
  BranchResult out;
  const auto t0 = Clock::now();
  if (!solved) {
    solved = std::make_unique<GlpkModel>();
    build_model(r, *solved);
    if (!solve_lp(*solved, seconds, limits)) return out;
  }
  GlpkModel& m = *solved;
  out.bound = glp_get_obj_val(m.lp);
  const int ncols = static_cast<int>(m.col_job.size());
  std::vector<double> start(ncols + 1, 0.0);
  for (int i = 0; i < ncols; ++i) {
    if (incumbent[m.col_job[i]] == m.col_choice[i]) start[i + 1] = 1.0;
  }
  CallbackData cb{&start, NodeLimit{limits.nodes}};
  glp_iocp iocp;
  glp_init_iocp(&iocp);
  iocp.msg_lev = GLP_MSG_OFF;
  iocp.presolve = GLP_OFF;  // the LP relaxation is solved; the incumbent maps to our columns
  iocp.mip_gap = gap;
  iocp.tm_lim = glpk_ms(seconds - seconds_since(t0));
  iocp.cb_func = glpk_callback;
  iocp.cb_info = &cb;
  // Mixed-integer rounding and Gomory cuts: on these knapsack rows they raise the bound
  // enough that the search ends in milliseconds where it otherwise runs for seconds.
  iocp.mir_cuts = GLP_ON;
  iocp.gmi_cuts = GLP_ON;
  int rc = glp_intopt(m.lp, &iocp);
  int st = glp_mip_status(m.lp);
  out.node_limit = cb.nodes.hit;
  if (st == GLP_OPT || st == GLP_FEAS) {
    out.pick.assign(r.choices.size(), -1);
    for (int i = 0; i < ncols; ++i) {
      if (glp_mip_col_val(m.lp, i + 1) > 0.5) out.pick[m.col_job[i]] = m.col_choice[i];
    }
    out.value = glp_mip_obj_val(m.lp);
    out.found = true;
    // GLP_EMIPGAP: stopped because the relative gap reached the tolerance -- a success.
    out.optimal = (rc == 0 && st == GLP_OPT) || rc == GLP_EMIPGAP;
    if (out.optimal) {
      out.bound = std::min(out.bound, out.value + gap * std::fabs(out.value) + 1e-12);
    }
  }
  return out;
}

// LP rounding with a small exact core. The LP relaxation is solved on every column, or,
// above `slack` = finite, on the choices within `slack` of each job's best reduced value at
// the Lagrangian prices (the only ones an optimal LP solution uses when those prices are
// optimal). Its basic optimum has at most one fractional job per capacity row, and its row
// duals are exact prices. Jobs whose LP choice is integral and clearly best at those prices
// keep it; the fractional jobs and the `core_size` least clear-cut ones are then decided
// exactly by branch and cut in the room the others leave. With every column (slack
// infinite) and `solved` given, the solved LP model is handed out there: it is the whole
// problem's, ready for branch and cut.
bool lp_round(const Reduced& r, const std::vector<double>& price, double slack, double seconds,
              const SolveLimits& limits, int core_size, std::vector<int>& out, double* lp_value,
              std::unique_ptr<GlpkModel>* solved) {
  const auto t0 = Clock::now();
  const int njobs = static_cast<int>(r.choices.size());
  Reduced sub;
  sub.capacity = r.capacity;
  for (int j = 0; j < njobs; ++j) {
    double b1 = 0;
    for (const MckpChoice* c : r.choices[j]) b1 = std::max(b1, reduced_cost(*c, price));
    std::vector<const MckpChoice*> cs;
    std::vector<int> idx;
    for (std::size_t k = 0; k < r.choices[j].size(); ++k) {
      if (reduced_cost(*r.choices[j][k], price) < b1 - slack) continue;
      cs.push_back(r.choices[j][k]);
      idx.push_back(static_cast<int>(k));
    }
    if (cs.empty()) continue;
    sub.add_job(j, std::move(cs), std::move(idx));
  }
  auto model = std::make_unique<GlpkModel>();
  GlpkModel& m = *model;
  build_model(sub, m);
  if (!solve_lp(m, seconds, limits)) return false;
  if (lp_value) *lp_value = glp_get_obj_val(m.lp);
  const int nsub = static_cast<int>(sub.job.size());
  const int rows = static_cast<int>(r.capacity.size());
  std::vector<double> dual(rows);
  for (int k = 0; k < rows; ++k) dual[k] = std::max(0.0, glp_get_row_dual(m.lp, nsub + k + 1));
  // The LP's choice per job and whether it is fractional.
  std::vector<double> best_x(nsub, 0.0);
  std::vector<int> lp_choice(nsub, -1);
  std::vector<char> frac(nsub, 0);
  for (std::size_t i = 0; i < m.col_job.size(); ++i) {
    double x = glp_get_col_prim(m.lp, static_cast<int>(i) + 1);
    int sj = m.col_job[i];
    if (x > 1e-6 && x < 1 - 1e-6) frac[sj] = 1;
    if (x > best_x[sj]) {
      best_x[sj] = x;
      lp_choice[sj] = m.col_choice[i];
    }
  }
  // How clear-cut each job's LP decision is at the exact prices.
  std::vector<std::pair<double, int>> margin;
  for (int sj = 0; sj < nsub; ++sj) {
    if (frac[sj]) {
      margin.push_back({-1.0, sj});
      continue;
    }
    double b1 = 0, b2 = 0;
    for (const MckpChoice* c : sub.choices[sj]) {
      double v = reduced_cost(*c, dual);
      if (v > b1) {
        b2 = b1;
        b1 = v;
      } else if (v > b2) {
        b2 = v;
      }
    }
    margin.push_back({b1 - b2, sj});
  }
  std::sort(margin.begin(), margin.end());
  std::vector<char> in_core(nsub, 0);
  for (int k = 0; k < std::min(nsub, core_size); ++k) in_core[margin[k].second] = 1;
  for (int sj = 0; sj < nsub; ++sj) in_core[sj] |= frac[sj];
  out.assign(njobs, -1);
  Reduced core;
  core.capacity = r.capacity;
  for (int sj = 0; sj < nsub; ++sj) {
    if (in_core[sj] || lp_choice[sj] < 0 || best_x[sj] < 0.5) continue;
    out[sub.job[sj]] = sub.index[sj][lp_choice[sj]];
    for (auto [row, amount] : sub.choices[sj][lp_choice[sj]]->usage) core.capacity[row] -= amount;
  }
  for (int sj = 0; sj < nsub; ++sj) {
    if (!in_core[sj]) continue;
    // All of the job's choices, not only the restricted ones.
    const int j = sub.job[sj];
    std::vector<const MckpChoice*> cs;
    std::vector<int> idx;
    for (std::size_t k = 0; k < r.choices[j].size(); ++k) {
      bool fits = true;
      for (auto [row, amount] : r.choices[j][k]->usage) fits &= amount <= core.capacity[row] + 1e-9;
      if (!fits) continue;
      cs.push_back(r.choices[j][k]);
      idx.push_back(static_cast<int>(k));
    }
    if (cs.empty()) continue;
    core.add_job(j, std::move(cs), std::move(idx));
  }
  if (!core.job.empty()) {
    std::vector<int> none(core.job.size(), -1);
    double left = std::max(0.001, seconds - seconds_since(t0));
    BranchResult g = branch_and_cut(core, none, 1e-9, left, limits);
    if (g.found) {
      for (std::size_t c = 0; c < core.job.size(); ++c) {
        if (g.pick[c] >= 0) out[core.job[c]] = core.index[c][g.pick[c]];
      }
    }
  }
  if (solved && std::isinf(slack)) *solved = std::move(model);
  return true;
}

}  // namespace

double mckp_value(const MckpProblem& p, const std::vector<int>& pick) {
  double v = 0;
  for (std::size_t j = 0; j < pick.size(); ++j) {
    if (pick[j] >= 0) v += p.jobs[j][pick[j]].value;
  }
  return v;
}

bool mckp_feasible(const MckpProblem& p, const std::vector<int>& pick) {
  std::vector<double> used(p.capacity.size(), 0.0);
  for (std::size_t j = 0; j < pick.size(); ++j) {
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0 && pick[j] != f) return false;
    if (pick[j] < 0) continue;
    for (auto [row, amount] : p.jobs[j][pick[j]].usage) used[row] += amount;
  }
  for (std::size_t k = 0; k < used.size(); ++k) {
    if (used[k] > p.capacity[k] + 1e-9) return false;
  }
  return true;
}

MckpSolution solve_mckp(const MckpProblem& problem, const MckpOptions& options) {
  const auto t0 = Clock::now();
  MckpSolution sol;
  const std::size_t n = problem.jobs.size();
  sol.pick.assign(n, -1);
  for (std::size_t j = 0; j < n && j < problem.forced.size(); ++j) sol.pick[j] = problem.forced[j];
  Reduced r = reduce(problem);
  if (!r.forced_feasible) {
    sol.status = "infeasible";
    sol.method = "none";
    sol.value = mckp_value(problem, sol.pick);
    sol.bound = sol.value;
    return sol;
  }
  const bool dbg = std::getenv("SIA_MCKP_DEBUG") != nullptr;
  const double time_limit = options.limits.seconds;  // infinity: none
  Heuristic h = lagrangian(r, t0, time_limit);
  const double bound0 = h.bound + r.forced_value;
  double bound = bound0;
  auto trace = [&](const char* what, const std::vector<int>& pk) {
    if (!dbg) return;
    double v = reduced_value(r, pk);
    std::fprintf(stderr, "mckp: %-10s value %.6f bound %.6f gap %.2e at %.1f ms\n", what, v, bound,
                 relative_gap(v, bound), 1e3 * seconds_since(t0));
  };
  std::vector<int> pick = h.pick;
  trace("prices", pick);
  repair_and_improve(r, pick);
  trace("repair", pick);
  repack_rows(r, pick, h.price);
  trace("repack", pick);
  repair_and_improve(r, pick);
  trace("greedy", pick);
  double value = reduced_value(r, pick);
  bool proved = false;  // branch and cut closed the gap
  sol.method = "lagrangian";
  sol.prices = h.price;
  auto left = [&] { return time_limit - seconds_since(t0); };
  // LP rounding: on every column when the LP is small (its optimum is then also the best
  // bound), else -- when the greedy result is not already within 1e-3 -- on the columns
  // the prices leave in play.
  std::size_t columns = 0;
  for (const auto& cs : r.choices) columns += cs.size();
  const bool small = columns <= options.full_lp_columns;
  std::unique_ptr<GlpkModel> whole_lp;  // the whole problem's LP, solved by the rounding
  if (options.use_glpk && relative_gap(value, bound) > options.mip_gap && left() > 0.002 &&
      (small || relative_gap(value, bound) > 1e-3)) {
    std::vector<int> rounded;
    const bool full = small;
    const double slack =
        full ? std::numeric_limits<double>::infinity()
             : 1e-2 * std::max(1.0, std::fabs(bound0) / std::max<std::size_t>(1, r.choices.size()));
    double lp = 0;
    // round_time is a wall-clock bound too: without a time limit only the work limits apply.
    const double round_seconds =
        std::isfinite(time_limit) ? std::min(left(), options.round_time) : left();
    if (lp_round(r, h.price, slack, round_seconds, options.limits, options.core_size, rounded, &lp,
                 &whole_lp)) {
      if (full) bound = std::min(bound, lp + r.forced_value);
      repair_and_improve(r, rounded);
      repack_rows(r, rounded, h.price);
      repair_and_improve(r, rounded);
      trace("lp-round", rounded);
      double v = reduced_value(r, rounded);
      if (v > value) {
        value = v;
        pick = rounded;
        sol.method = "lp-round";
      }
    }
  }
  // Branch and cut, where it can still pay off within the time limit.
  const double gap_before = relative_gap(value, bound);
  if (options.use_glpk && gap_before > options.mip_gap && left() > 0.002 &&
      columns <= options.branch_columns &&
      (columns <= options.large_columns || gap_before > options.large_gap)) {
    BranchResult g = branch_and_cut(r, pick, options.mip_gap,
                                    std::min(left(), options.branch_time_fraction * time_limit),
                                    options.limits, std::move(whole_lp));
    bound = std::min(bound, g.bound + r.forced_value);
    proved = g.optimal;
    sol.node_limit = g.node_limit;
    if (g.found && g.value + r.forced_value >= value - 1e-12) {
      pick = g.pick;
      value = g.value + r.forced_value;
      sol.method = "glpk";
    }
    trace("glpk", pick);
  }
  const double gap = relative_gap(value, bound);
  sol.status = proved || gap <= options.mip_gap + 1e-12 ? "optimal"
               : left() <= 0.002                        ? "time-limit"
                                                        : "feasible";
  for (std::size_t j = 0; j < pick.size(); ++j) {
    sol.pick[r.job[j]] = pick[j] >= 0 ? r.index[j][pick[j]] : -1;
  }
  sol.value = mckp_value(problem, sol.pick);
  sol.bound = std::max(bound, sol.value);
  sol.gap = relative_gap(sol.value, sol.bound);
  return sol;
}

MckpSolution solve_mckp_brute_force(const MckpProblem& p) {
  MckpSolution best;
  const std::size_t n = p.jobs.size();
  std::vector<int> pick(n, -1);
  best.value = -std::numeric_limits<double>::infinity();
  std::function<void(std::size_t)> rec = [&](std::size_t j) {
    if (j == n) {
      if (mckp_feasible(p, pick)) {
        double v = mckp_value(p, pick);
        if (v > best.value) {
          best.value = v;
          best.pick = pick;
        }
      }
      return;
    }
    int f = j < p.forced.size() ? p.forced[j] : -1;
    if (f >= 0) {
      pick[j] = f;
      rec(j + 1);
      return;
    }
    for (int c = -1; c < static_cast<int>(p.jobs[j].size()); ++c) {
      pick[j] = c;
      rec(j + 1);
    }
    pick[j] = -1;
  };
  rec(0);
  best.bound = best.value;
  best.status = best.pick.empty() ? "infeasible" : "optimal";
  best.method = "brute-force";
  return best;
}

}  // namespace sia
