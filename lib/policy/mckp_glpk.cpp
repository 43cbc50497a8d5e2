#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <glpk.h>

#include "policy/glpk_limits.hpp"
#include "policy/mckp_steps.hpp"

namespace sia::mckp_detail {

GlpkModel::~GlpkModel() {
  if (lp) glp_delete_prob(lp);
}

namespace {

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
  // The best bound of the open nodes when the search last selected one: an upper bound on
  // the optimum that only falls as the search goes on (cuts, branching), so the last one
  // seen holds however the search ends.
  double open_bound = std::numeric_limits<double>::infinity();
  const ProveGap* prove = nullptr;
  bool proved = false;  // stopped because the open nodes proved prove->gap
};

void glpk_callback(glp_tree* tree, void* info) {
  auto* d = static_cast<CallbackData*>(info);
  if (glp_ios_reason(tree) == GLP_ISELECT) {
    const int best = glp_ios_best_node(tree);
    if (best != 0) d->open_bound = std::min(d->open_bound, glp_ios_node_bound(tree, best));
    glp_prob* lp = glp_ios_get_prob(tree);
    if (d->prove && best != 0 && glp_mip_status(lp) == GLP_FEAS) {
      const double value = glp_mip_obj_val(lp) + d->prove->offset;
      if (relative_gap(value, d->open_bound + d->prove->offset) <= d->prove->gap * (1 - 1e-9)) {
        d->proved = true;
        glp_ios_terminate(tree);
        return;
      }
    }
  }
  d->nodes.on(tree);
  if (glp_ios_reason(tree) == GLP_IHEUR && !d->given) {
    d->given = true;
    glp_ios_heur_sol(tree, d->start->data());
  }
}

}  // namespace

BranchResult branch_and_cut(const Reduced& r, const std::vector<int>& incumbent, double gap,
                            double seconds, const SolveLimits& limits,
                            std::unique_ptr<GlpkModel> solved, const ProveGap* prove) {
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
  cb.prove = prove;
  glp_iocp iocp;
  glp_init_iocp(&iocp);
  iocp.msg_lev = GLP_MSG_OFF;
  iocp.presolve = GLP_OFF;  // the LP relaxation is solved; the incumbent maps to our columns
  iocp.mip_gap = prove ? 0.0 : gap;  // with `prove`, the callback decides
  iocp.tm_lim = glpk_ms(seconds - seconds_since(t0));
  iocp.cb_func = glpk_callback;
  iocp.cb_info = &cb;
  // Mixed-integer rounding and Gomory cuts: on these knapsack rows they raise the bound
  // enough that the search ends in milliseconds where it otherwise runs for seconds.
  iocp.mir_cuts = GLP_ON;
  iocp.gmi_cuts = GLP_ON;
  int rc = glp_intopt(m.lp, &iocp);
  int st = glp_mip_status(m.lp);
  out.node_limit = cb.nodes.hit && !cb.proved;
  if (st == GLP_OPT || st == GLP_FEAS) {
    out.pick.assign(r.choices.size(), -1);
    for (int i = 0; i < ncols; ++i) {
      if (glp_mip_col_val(m.lp, i + 1) > 0.5) out.pick[m.col_job[i]] = m.col_choice[i];
    }
    out.value = glp_mip_obj_val(m.lp);
    out.found = true;
    // GLP_EMIPGAP: stopped because the relative gap reached the tolerance -- a success.
    out.optimal = (rc == 0 && st == GLP_OPT) || rc == GLP_EMIPGAP || cb.proved;
    // What the search proved, however it ended (never below the incumbent).
    out.bound = std::min(out.bound, std::max(cb.open_bound, out.value));
    if (out.optimal && !cb.proved) {
      out.bound = std::min(out.bound, out.value + gap * std::fabs(out.value) + 1e-12);
    }
  }
  return out;
}

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

}  // namespace sia::mckp_detail
