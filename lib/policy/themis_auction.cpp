#include "policy/themis_auction.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <glpk.h>

#include "policy/glpk_limits.hpp"

namespace sia {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kPerGpu = 1e-7;   // tie-break: fewer GPUs
constexpr double kPerNode = 1e-8;  // then fewer nodes

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double tie_broken(const AuctionBid& b) {
  return b.weight - kPerGpu * b.gpus - kPerNode * b.nodes;
}

// Bids worth considering: positive weight, a valid app, within every row on their own.
std::vector<int> valid_bids(const AuctionProblem& p) {
  std::vector<int> out;
  for (std::size_t b = 0; b < p.bids.size(); ++b) {
    const AuctionBid& bid = p.bids[b];
    if (!(bid.weight > 0) || !std::isfinite(bid.weight) || bid.app < 0 || bid.app >= p.apps) {
      continue;
    }
    bool fits = true;
    for (auto [row, amount] : bid.usage) {
      fits &=
          row >= 0 && row < static_cast<int>(p.capacity.size()) && amount <= p.capacity[row] + 1e-9;
    }
    if (fits) out.push_back(static_cast<int>(b));
  }
  return out;
}

double weight_of(const AuctionProblem& p, const std::vector<int>& pick) {
  double v = 0;
  for (int b : pick) {
    if (b >= 0) v += p.bids[b].weight;
  }
  return v;
}

// The greedy fallback: bids by weight per GPU, skipping `excluded`.
std::vector<int> greedy(const AuctionProblem& p, const std::vector<int>& valid, int excluded) {
  std::vector<int> order;
  for (int b : valid) {
    if (p.bids[b].app != excluded) order.push_back(b);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const AuctionBid& x = p.bids[a];
    const AuctionBid& y = p.bids[b];
    const double rx = x.weight / std::max(1, x.gpus), ry = y.weight / std::max(1, y.gpus);
    if (rx != ry) return rx > ry;
    if (x.weight != y.weight) return x.weight > y.weight;
    return a < b;
  });
  std::vector<int> pick(p.apps, -1);
  std::vector<double> used(p.capacity.size(), 0.0);
  for (int b : order) {
    const AuctionBid& bid = p.bids[b];
    if (pick[bid.app] >= 0) continue;
    bool fits = true;
    for (auto [row, amount] : bid.usage) fits &= used[row] + amount <= p.capacity[row] + 1e-9;
    if (!fits) continue;
    for (auto [row, amount] : bid.usage) used[row] += amount;
    pick[bid.app] = b;
  }
  return pick;
}

// The PF ILP in GLPK: one binary column per valid bid, a row per app (at most one bid)
// and one per capacity row.
class PfModel {
 public:
  PfModel(const AuctionProblem& p, const std::vector<int>& valid) : p_(p), valid_(valid) {
    glp_term_out(GLP_OFF);  // GLPK prints to stdout otherwise, which carries our document
    lp_ = glp_create_prob();
    glp_set_obj_dir(lp_, GLP_MAX);
    const int rows = static_cast<int>(p.capacity.size());
    glp_add_rows(lp_, p.apps + rows);
    for (int a = 0; a < p.apps; ++a) glp_set_row_bnds(lp_, a + 1, GLP_UP, 0, 1);
    for (int k = 0; k < rows; ++k) {
      glp_set_row_bnds(lp_, p.apps + k + 1, GLP_UP, 0, std::max(0.0, p.capacity[k]));
    }
    const int cols = static_cast<int>(valid.size());
    glp_add_cols(lp_, cols);
    std::vector<int> ia(1), ja(1);
    std::vector<double> ar(1);
    for (int c = 0; c < cols; ++c) {
      const AuctionBid& bid = p.bids[valid[c]];
      glp_set_col_kind(lp_, c + 1, GLP_BV);
      glp_set_obj_coef(lp_, c + 1, tie_broken(bid));
      ia.push_back(bid.app + 1);
      ja.push_back(c + 1);
      ar.push_back(1.0);
      for (auto [row, amount] : bid.usage) {
        if (amount == 0) continue;
        ia.push_back(p.apps + row + 1);
        ja.push_back(c + 1);
        ar.push_back(amount);
      }
    }
    glp_load_matrix(lp_, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  }
  PfModel(const PfModel&) = delete;
  PfModel& operator=(const PfModel&) = delete;
  ~PfModel() { glp_delete_prob(lp_); }

  struct Solve {
    bool found = false;
    bool optimal = false;
    std::vector<int> pick;  // per app
  };

  // Solves with `excluded`'s columns fixed to 0 (restored afterwards).
  Solve solve(int excluded, double seconds, int nodes, double gap) {
    const int cols = static_cast<int>(valid_.size());
    for (int c = 0; c < cols; ++c) {
      if (p_.bids[valid_[c]].app == excluded) glp_set_col_bnds(lp_, c + 1, GLP_FX, 0, 0);
    }
    glp_iocp iocp;
    glp_init_iocp(&iocp);
    iocp.msg_lev = GLP_MSG_OFF;
    iocp.presolve = GLP_ON;
    iocp.mip_gap = gap;
    iocp.tm_lim = glpk_ms(seconds);
    NodeLimit limit{nodes};
    iocp.cb_func = node_limit_callback;
    iocp.cb_info = &limit;
    const int rc = glp_intopt(lp_, &iocp);
    const int st = glp_mip_status(lp_);
    Solve out;
    if (st == GLP_OPT || st == GLP_FEAS) {
      out.found = true;
      out.optimal = (rc == 0 && st == GLP_OPT) || rc == GLP_EMIPGAP;
      out.pick.assign(p_.apps, -1);
      for (int c = 0; c < cols; ++c) {
        if (glp_mip_col_val(lp_, c + 1) > 0.5) out.pick[p_.bids[valid_[c]].app] = valid_[c];
      }
    }
    for (int c = 0; c < cols; ++c) {
      if (p_.bids[valid_[c]].app == excluded) glp_set_col_bnds(lp_, c + 1, GLP_DB, 0, 1);
    }
    return out;
  }

 private:
  const AuctionProblem& p_;
  const std::vector<int>& valid_;
  glp_prob* lp_ = nullptr;
};

std::string format_warning(const char* what, int app, double lower, double got) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: app %d: OPT without it %.9g below the feasible %.9g", what,
                app, got, lower);
  return buf;
}

}  // namespace

bool auction_feasible(const AuctionProblem& p, const std::vector<int>& pick) {
  if (static_cast<int>(pick.size()) != p.apps) return false;
  std::vector<double> used(p.capacity.size(), 0.0);
  for (int a = 0; a < p.apps; ++a) {
    const int b = pick[a];
    if (b < 0) continue;
    if (b >= static_cast<int>(p.bids.size()) || p.bids[b].app != a) return false;
    for (auto [row, amount] : p.bids[b].usage) used[row] += amount;
  }
  for (std::size_t k = 0; k < used.size(); ++k) {
    if (used[k] > p.capacity[k] + 1e-9) return false;
  }
  return true;
}

AuctionResult run_auction(const AuctionProblem& p, const AuctionOptions& o) {
  const auto t0 = Clock::now();
  AuctionResult r;
  r.pick.assign(p.apps, -1);
  r.payment.assign(p.apps, 1.0);
  r.status = "optimal";
  const std::vector<int> valid = valid_bids(p);
  if (valid.empty()) return r;
  bool one_bidder = true;
  for (int b : valid) one_bidder &= p.bids[b].app == p.bids[valid.front()].app;
  if (one_bidder) {
    // The app takes its best bid (each fits on its own) and pays nothing.
    int best = valid.front();
    for (int b : valid) {
      if (tie_broken(p.bids[b]) > tie_broken(p.bids[best])) best = b;
    }
    r.pick[p.bids[best].app] = best;
    r.opt = p.bids[best].weight;
    return r;
  }

  std::vector<int> winners;
  auto record = [&](const std::vector<int>& pick) {
    r.pick = pick;
    r.opt = weight_of(p, pick);
    for (int a = 0; a < p.apps; ++a) {
      if (pick[a] >= 0) winners.push_back(a);
    }
  };
  auto payment = [&](int a, double without) {
    const double lower = r.opt - p.bids[r.pick[a]].weight;  // the others' welfare with a
    if (without < lower - 1e-9) {
      r.warnings.push_back(format_warning("payment", a, lower, without));
      return 1.0;
    }
    return std::clamp(std::exp(lower - without), 0.0, 1.0);
  };

  if (o.use_glpk) {
    PfModel model(p, valid);
    const double budget = o.limits.seconds;
    PfModel::Solve s = model.solve(-1, std::max(1e-3, budget / 2), o.limits.nodes, o.mip_gap);
    ++r.solves;
    if (s.found) {
      if (!s.optimal) r.status = "time-limit";
      record(s.pick);
      if (o.payments) {
        for (std::size_t k = 0; k < winners.size(); ++k) {
          const int a = winners[k];
          const double left = std::max(
              1e-3, (budget - seconds_since(t0)) / static_cast<double>(winners.size() - k));
          PfModel::Solve without = model.solve(a, left, o.limits.nodes, o.mip_gap);
          ++r.solves;
          if (!without.found) {
            r.warnings.push_back("payment: app " + std::to_string(a) +
                                 ": no solution without it within the limits; c = 1");
            continue;
          }
          r.payment[a] = payment(a, weight_of(p, without.pick));
        }
      }
      return r;
    }
    r.warnings.push_back("GLPK found no integer solution within the limits: greedy");
  }
  r.status = "greedy";
  winners.clear();
  record(greedy(p, valid, -1));
  ++r.solves;
  if (o.payments) {
    for (int a : winners) {
      r.payment[a] = payment(a, weight_of(p, greedy(p, valid, a)));
      ++r.solves;
    }
  }
  return r;
}

}  // namespace sia
