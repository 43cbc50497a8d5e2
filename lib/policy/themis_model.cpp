#include "policy/themis_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/goodput.hpp"

namespace sia {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int pow2_ceil(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

// GPUs of one node usable by blocks of size >= s (s = 1: all of them).
int block_capacity(int gpus_per_node, int s) {
  if (s <= 1) return gpus_per_node;
  int total = 0;
  for (int v : virtual_node_sizes(gpus_per_node)) total += (v / s) * s;
  return total;
}

int usage_on(const ThemisRow& row, const Config& c, int gpus_per_node) {
  if (c.type != row.type) return 0;
  if (row.size == 1) return c.gpus;
  const int full = c.nodes > 1 || c.gpus >= gpus_per_node ? c.gpus / gpus_per_node : 0;
  const int rest = c.gpus - full * gpus_per_node;
  int use = full * block_capacity(gpus_per_node, row.size);
  if (rest > 0) {
    const int block = pow2_ceil(rest);
    if (block > largest_virtual_node(gpus_per_node)) {
      use += block_capacity(gpus_per_node, row.size);
    } else if (block >= row.size) {
      use += block;
    }
  }
  return use;
}

double entry_rate(const GoodputEntry& e, double b0) {
  const double samples = e.raw_goodput > 0 ? e.raw_goodput : e.goodput;
  return samples > 0 ? samples / (b0 > 0 ? b0 : 1.0) : 0;
}

// The job's fitted model on type t at n GPUs and the tuned batch, in iterations/s; 0 when
// unknown.
double model_rate(const GoodputRow& row, const Cluster& cluster, int t, int n) {
  const JobModelInfo& mi = row.model;
  const double b0 = mi.init_batch_size;
  if (t >= static_cast<int>(mi.types.size()) || !mi.types[t].known || !(b0 > 0) ||
      !(row.fixed_batch > 0)) {
    return 0;
  }
  const TypeModelInfo& tm = mi.types[t];
  const int stages = std::max(1, tm.stages);
  const int replicas = n / stages;
  if (replicas < 1) return 0;
  const int gpn = std::max(1, cluster.types[t].gpus_per_node);
  GoodputFunction f(PerfParams::from_array(tm.params), mi.gradient, b0, stages);
  BatchChoice bc = f.fixed_batch((n + gpn - 1) / gpn, replicas, row.fixed_batch, tm.max_local);
  return bc.goodput > 0 && std::isfinite(bc.goodput) ? bc.goodput / b0 : 0;
}

// rate_t(n) and the most GPUs the job can use on t (0: it cannot run on t).
struct TypeRate {
  const GoodputRow* row = nullptr;
  const Cluster* cluster = nullptr;
  int type = 0;
  int dmax = 0;
  double anchor = 0;                           // the fixed entry's rate at the gang
  std::vector<std::pair<int, double>> points;  // rows without a fixed configuration

  double operator()(int n) const {
    if (n <= 0 || dmax <= 0) return 0;
    if (!points.empty()) {
      if (n <= points.front().first) return points.front().second * n / points.front().first;
      for (std::size_t k = 1; k < points.size(); ++k) {
        if (n <= points[k].first) {
          const auto [g0, r0] = points[k - 1];
          const auto [g1, r1] = points[k];
          return r0 + (r1 - r0) * (n - g0) / static_cast<double>(g1 - g0);
        }
      }
      return points.back().second;
    }
    const int gang = row->fixed_gpus;
    if (anchor > 0 && n >= gang) return anchor;
    const double m = model_rate(*row, *cluster, type, n);
    if (anchor > 0) {
      const double mg = model_rate(*row, *cluster, type, gang);
      if (m > 0 && mg > 0) return anchor * m / mg;
      return anchor * n / gang;
    }
    return m;
  }
};

TypeRate type_rate(const GoodputRow& row, const Cluster& cluster, int t,
                   const std::vector<ThemisGang>& gangs) {
  TypeRate r;
  r.row = &row;
  r.cluster = &cluster;
  r.type = t;
  if (row.fixed_gpus > 0 && !row.fixed.empty()) {
    for (const ThemisGang& c : gangs) {
      if (c.config.type == t) r.anchor = c.rate;
    }
    if (r.anchor > 0 || model_rate(row, cluster, t, 1) > 0) r.dmax = row.fixed_gpus;
    return r;
  }
  for (const ThemisGang& c : gangs) {
    if (c.config.type != t) continue;
    r.points.push_back({c.config.gpus, c.rate});
    r.dmax = std::max(r.dmax, c.config.gpus);
  }
  std::sort(r.points.begin(), r.points.end());
  r.points.erase(std::unique(r.points.begin(), r.points.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 r.points.end());
  return r;
}

}  // namespace

std::vector<ThemisRow> themis_rows(const Cluster& cluster) {
  std::vector<ThemisRow> rows;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const GpuType& g = cluster.types[t];
    if (g.gpus_per_node <= 0) continue;
    const int largest = largest_virtual_node(g.gpus_per_node);
    for (int s = 1; s <= largest; s *= 2) {
      rows.push_back({static_cast<int>(t), s,
                      static_cast<double>(g.node_count) * block_capacity(g.gpus_per_node, s)});
    }
  }
  return rows;
}

ThemisUsage themis_usage(const std::vector<ThemisRow>& rows, const Cluster& cluster,
                         const Config& c) {
  ThemisUsage out;
  const int gpn = cluster.types[c.type].gpus_per_node;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int u = usage_on(rows[k], c, gpn);
    if (u > 0) out.push_back({static_cast<int>(k), u});
  }
  return out;
}

std::vector<ThemisGang> themis_gangs(const GoodputRow& row, const Cluster& cluster,
                                     const std::vector<ThemisRow>& rows) {
  const double b0 = row.model.init_batch_size;
  const std::vector<GoodputEntry>& source =
      row.fixed_gpus > 0 && !row.fixed.empty() ? row.fixed : row.entries;
  std::vector<ThemisGang> out;
  for (const GoodputEntry& e : source) {
    const Config& c = e.config;
    if (c.type < 0 || c.type >= static_cast<int>(cluster.types.size()) || c.gpus <= 0 ||
        c.nodes <= 0) {
      continue;
    }
    ThemisGang g;
    g.config = c;
    g.entry = &e;
    g.rate = entry_rate(e, b0);
    if (!(g.rate > 0)) continue;
    g.usage = themis_usage(rows, cluster, c);
    bool within = true;
    for (auto [k, amount] : g.usage) within &= amount <= rows[k].capacity + 1e-9;
    if (within) out.push_back(std::move(g));
  }
  return out;
}

double themis_rate(const GoodputRow& row, const Cluster& cluster,
                   const std::vector<ThemisGang>& gangs, int type, int gpus) {
  return type_rate(row, cluster, type, gangs)(gpus);
}

double themis_ideal_time(const GoodputRow& row, const Cluster& cluster,
                         const std::vector<ThemisGang>& gangs, double n_avg, double total) {
  double inverse = 0, weight = 0;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const int cap = cluster.types[t].capacity();
    if (cap <= 0) continue;
    TypeRate rate = type_rate(row, cluster, static_cast<int>(t), gangs);
    if (rate.dmax <= 0) continue;
    auto time_at = [&](int n) {
      const double r = rate(n);
      return r > 0 ? total / r : kInf;
    };
    const double s = std::min(static_cast<double>(rate.dmax), cap / std::max(1.0, n_avg));
    double tid;
    if (s < 1) {
      tid = time_at(1) / s;
    } else {
      const int lo = static_cast<int>(std::floor(s + 1e-9));
      const int hi = static_cast<int>(std::ceil(s - 1e-9));
      const double a = time_at(lo);
      tid = hi == lo ? a : a + (s - lo) * (time_at(hi) - a);
    }
    if (!(tid > 0) || !std::isfinite(tid)) continue;
    inverse += cap / tid;
    weight += cap;
  }
  return inverse > 0 ? weight / inverse : kInf;
}

}  // namespace sia
