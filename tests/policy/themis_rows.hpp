// Goodput rows and clusters for the Themis tests (policy/themis*.hpp and
// policy/fairness_estimate.hpp): rigid gangs with known rates, so ideal times and rho are
// computed by hand.
#pragma once

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/goodput_matrix.hpp"

namespace sia::themis_test {

inline Cluster cluster_of(const std::string& toml) {
  return cluster_from_document(parse_documents(toml, "cluster.toml", {"Cluster"}).front());
}

// `count` nodes of `gpus` GPUs of one type per (name, gpus, count).
inline Cluster cluster_with(const std::vector<std::tuple<std::string, int, int>>& groups) {
  std::string toml;
  for (const auto& [name, gpus, count] : groups) {
    toml += "[[node_groups]]\ngpu_type = \"" + name +
            "\"\ngpus_per_node = " + std::to_string(gpus) + "\ncount = " + std::to_string(count) +
            "\n";
  }
  return cluster_of(toml);
}

// A rigid job of `gang` GPUs whose tuned configuration runs at `rates[t]` iterations per
// second on type t (0: not on t). The initial batch is 1 sample, so rates are raw goodput;
// no fitted models, so the ideal time scales linearly; no restart penalty.
inline GoodputRow gang_job(const Cluster& c, const std::string& name, int gang,
                           const std::vector<double>& rates, double age, double done,
                           double total) {
  GoodputRow r;
  r.job = name;
  r.adaptivity = Adaptivity::rigid;
  r.age = age;
  r.restart_penalty = 0;
  r.min_gpus = r.max_gpus = gang;
  r.fixed_gpus = gang;
  r.fixed_batch = 32;
  r.model.init_batch_size = 1;
  r.model.types.assign(c.types.size(), TypeModelInfo{});
  for (std::size_t t = 0; t < c.types.size() && t < rates.size(); ++t) {
    const int gpn = c.types[t].gpus_per_node;
    if (!(rates[t] > 0) || gang > c.types[t].capacity()) continue;
    GoodputEntry e;
    e.config = Config{static_cast<int>(t), (gang + gpn - 1) / gpn, gang};
    e.raw_goodput = e.goodput = e.throughput = rates[t];
    e.batch.global = 32;
    e.batch.local = std::max(1, 32 / gang);
    r.fixed.push_back(e);
    r.entries.push_back(e);
  }
  r.progress = JobProgress{done, total};
  return r;
}

inline GoodputMatrix matrix_of(const Cluster& c, std::vector<GoodputRow> rows) {
  GoodputMatrix m;
  m.cluster = c;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  m.jobs = std::move(rows);
  return m;
}

}  // namespace sia::themis_test
