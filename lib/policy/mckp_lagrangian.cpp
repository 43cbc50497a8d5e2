#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "policy/mckp_steps.hpp"

namespace sia::mckp_detail {

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

namespace {

int usage_on(const MckpChoice& c, int row) {
  for (auto [r, amount] : c.usage) {
    if (r == row) return amount;
  }
  return 0;
}

// A reduced problem's choices laid out in flat arrays for the dual's inner loop, which runs
// hundreds of times per solve: the same numbers, in the same order.
struct FlatChoices {
  const Reduced& r;
  std::vector<std::size_t> job_first;  // per job: its first choice (then one past the last)
  std::vector<double> value;
  std::vector<int> total;
  std::vector<std::size_t> use_first;  // per choice: its first usage (then one past the last)
  std::vector<int> row, amount;

  explicit FlatChoices(const Reduced& reduced) : r(reduced) {
    for (std::size_t j = 0; j < r.choices.size(); ++j) {
      job_first.push_back(value.size());
      for (std::size_t c = 0; c < r.choices[j].size(); ++c) {
        value.push_back(r.choices[j][c]->value);
        total.push_back(r.total[j][c]);
        use_first.push_back(row.size());
        for (auto [k, a] : r.choices[j][c]->usage) {
          row.push_back(k);
          amount.push_back(a);
        }
      }
    }
    job_first.push_back(value.size());
    use_first.push_back(row.size());
  }
  // reduced_cost() of flat choice i.
  double reduced(std::size_t i, const std::vector<double>& price) const {
    double v = value[i];
    for (std::size_t u = use_first[i]; u < use_first[i + 1]; ++u) v -= price[row[u]] * amount[u];
    return v;
  }
};

// Dual value L(price) and each job's best local pick (-1 = none); with `demand`, the usage
// of every row by those picks (the subgradient of L is capacity - demand).
double dual(const FlatChoices& f, const std::vector<double>& price, std::vector<int>* pick,
            std::vector<double>* demand = nullptr) {
  double l = 0;
  for (std::size_t k = 0; k < price.size(); ++k) l += price[k] * f.r.capacity[k];
  for (std::size_t j = 0; j + 1 < f.job_first.size(); ++j) {
    double best = 0;
    int arg = -1;
    int arg_use = 0;
    const std::size_t first = f.job_first[j];
    for (std::size_t i = first; i < f.job_first[j + 1]; ++i) {
      double v = f.reduced(i, price);
      const int use = f.total[i];
      // Ties go to the smaller choice: it leaves room for others.
      if (v > best + 1e-12 || (arg >= 0 && std::fabs(v - best) <= 1e-12 && use < arg_use)) {
        best = v;
        arg = static_cast<int>(i - first);
        arg_use = use;
      }
    }
    l += best;
    if (pick) (*pick)[j] = arg;
    if (demand && arg >= 0) {
      const std::size_t i = first + static_cast<std::size_t>(arg);
      for (std::size_t u = f.use_first[i]; u < f.use_first[i + 1]; ++u) {
        (*demand)[f.row[u]] += f.amount[u];
      }
    }
  }
  return l;
}

// The step s in [0, s_max] that minimises L(base + s * dir), exactly. Along the line L is
// convex and piecewise linear: the prices' part has slope dir . capacity, and each job's
// term is the upper envelope of its choices' reduced values, lines a - s * d with d =
// dir . usage, and of waiting (0). Returns the smallest s at which L no longer falls, that
// is where the jobs' best choices' total d (their demand along dir) comes down to dir .
// capacity; s_max when L falls all the way. `lines` and `events` are scratch space.
struct Line {
  double a;  // reduced value at base
  double d;  // dir . usage
};
struct Event {
  double at;
  double drop;  // the demand along dir given up there
};
double line_min(const FlatChoices& f, const std::vector<double>& base,
                const std::vector<double>& dir, double s_max, std::vector<Line>& lines,
                std::vector<Event>& events) {
  const std::size_t rows = base.size();
  events.clear();
  double room = 0;
  for (std::size_t k = 0; k < rows; ++k) room += dir[k] * f.r.capacity[k];
  double demand = 0;
  for (std::size_t j = 0; j + 1 < f.job_first.size(); ++j) {
    // Flat first: waiting and every choice that does not move along dir.
    lines.assign(1, Line{0, 0});
    for (std::size_t i = f.job_first[j]; i < f.job_first[j + 1]; ++i) {
      double d = 0;
      for (std::size_t u = f.use_first[i]; u < f.use_first[i + 1]; ++u) {
        d += dir[f.row[u]] * f.amount[u];
      }
      const double a = f.reduced(i, base);
      if (d == 0) {
        lines[0].a = std::max(lines[0].a, a);
      } else {
        lines.push_back({a, d});
      }
    }
    // The best at s = 0 (ties to the smaller demand: it leaves room for others), then each
    // line that overtakes the current one, walking up from 0.
    std::size_t cur = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (lines[i].a > lines[cur].a + 1e-12 ||
          (std::fabs(lines[i].a - lines[cur].a) <= 1e-12 && lines[i].d < lines[cur].d)) {
        cur = i;
      }
    }
    demand += lines[cur].d;
    double s = 0;
    for (;;) {
      const Line& c = lines[cur];
      double best_at = std::numeric_limits<double>::infinity();
      std::size_t next = lines.size();
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].d >= c.d) continue;
        const double x = (c.a - lines[i].a) / (c.d - lines[i].d);
        if (x < s - 1e-15) continue;
        if (next == lines.size() || x < best_at - 1e-15 ||
            (std::fabs(x - best_at) <= 1e-15 && lines[i].d < lines[next].d)) {
          best_at = x;
          next = i;
        }
      }
      if (next == lines.size() || best_at > s_max) break;
      events.push_back({std::max(best_at, 0.0), c.d - lines[next].d});
      s = std::max(best_at, s);
      cur = next;
    }
  }
  if (demand <= room + 1e-9) return 0;
  std::sort(events.begin(), events.end(),
            [](const Event& x, const Event& y) { return x.at < y.at; });
  for (const auto& e : events) {
    demand -= e.drop;
    if (demand <= room + 1e-9) return e.at;
  }
  if (std::isfinite(s_max)) return s_max;
  return events.empty() ? 0 : events.back().at;
}

// Exact minimisation of L along one row's price: the smallest price at which the jobs'
// demand for the row no longer exceeds its capacity.
double clearing_price(const FlatChoices& f, const std::vector<double>& price, int row,
                      std::vector<Line>& lines, std::vector<Event>& events) {
  std::vector<double> base = price, dir(price.size(), 0.0);
  base[row] = 0;
  dir[row] = 1;
  return line_min(f, base, dir, std::numeric_limits<double>::infinity(), lines, events);
}

// Minimises L along price + s * dir (s >= 0, until a price reaches 0): the coordinate
// sweeps move all prices up together in small steps; one long step along their common
// direction (a pattern move) saves most of the sweeps. Returns the best L found and
// updates price.
double pattern_move(const FlatChoices& f, std::vector<double>& price,
                    const std::vector<double>& dir, double current, std::vector<Line>& lines,
                    std::vector<Event>& events) {
  double s_max = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < price.size(); ++k) {
    if (dir[k] < 0) s_max = std::min(s_max, price[k] / -dir[k]);
  }
  const double s = line_min(f, price, dir, s_max, lines, events);
  if (!(s > 0)) return current;
  std::vector<double> p(price.size());
  for (std::size_t k = 0; k < price.size(); ++k) p[k] = std::max(0.0, price[k] + s * dir[k]);
  const double l = dual(f, p, nullptr);
  if (!(l < current)) return current;
  price.swap(p);
  return l;
}

}  // namespace

Heuristic lagrangian(const Reduced& r, Clock::time_point t0, double budget) {
  const int rows = static_cast<int>(r.capacity.size());
  Heuristic h;
  const FlatChoices flat(r);
  std::vector<double> price(rows, 0.0);
  // At prices of zero every job takes its best; if those fit together, they are optimal.
  std::vector<double> demand(rows, 0.0);
  h.pick.assign(r.choices.size(), -1);
  double best = dual(flat, price, &h.pick, &demand);
  h.no_row_binds = true;
  for (int k = 0; k < rows; ++k) h.no_row_binds &= demand[k] <= r.capacity[k] + 1e-9;
  if (h.no_row_binds) {
    h.bound = best;
    h.price = price;
    return h;
  }
  std::vector<double> best_price = price;
  std::vector<Line> lines;
  std::vector<Event> events;
  for (int sweep = 0; sweep < 30; ++sweep) {
    double before = best;
    std::vector<double> start = price;
    for (int row = 0; row < rows; ++row) {
      price[row] = clearing_price(flat, price, row, lines, events);
      double l = dual(flat, price, nullptr);
      if (l < best) {
        best = l;
        best_price = price;
      }
    }
    if (rows > 1) {
      std::vector<double> dir(rows);
      for (int k = 0; k < rows; ++k) dir[k] = price[k] - start[k];
      double l = pattern_move(flat, price, dir, dual(flat, price, nullptr), lines, events);
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
  dual(flat, up, &h.pick);
  return h;
}

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

}  // namespace sia::mckp_detail
