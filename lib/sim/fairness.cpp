#include "sim/fairness.hpp"

#include <atomic>
#include <cmath>
#include <thread>

#include <map>
#include <tuple>
#include "core/error.hpp"

namespace sia {

namespace {

using Key = std::tuple<std::string, int, double, int, double, std::string, int>;

Cluster one_type_cluster(const Cluster& cluster, int type, int gpus) {
  const GpuType& t = cluster.types[type];
  Cluster c;
  c.name = cluster.name + "-" + t.name + "-share";
  GpuType g = t;
  g.node_count = 0;
  c.types.push_back(g);
  NodeGroup ng;
  ng.gpu_type = t.name;
  ng.gpus_per_node = t.gpus_per_node;
  ng.count = (gpus + t.gpus_per_node - 1) / t.gpus_per_node;
  ng.name_prefix = t.name + "-";
  c.groups.push_back(ng);
  c.finalize("fair-share", ExitStatus::software);
  return c;
}

}  // namespace

void add_finish_time_fairness(SimResult& result, const Cluster& cluster, const Catalog& catalog,
                              const std::vector<JobSpec>& workload, const SimOptions& options) {
  SimOptions iso = options;
  iso.fairness = false;
  iso.save_rounds_dir.clear();
  iso.record_rounds = false;
  iso.progress = nullptr;
  // The isolated runs each job needs, collected first and simulated in parallel.
  std::map<Key, double> cache;  // isolated JCT for a submission at a round boundary
  struct Need {
    JobSpec spec;
    int type;
    int gpus;
  };
  std::map<Key, Need> needed;
  auto key_of = [&](const JobSpec& spec, int type, int gpus) {
    return Key{spec.model,
               static_cast<int>(spec.adaptivity),
               spec.batch_size,
               spec.gpus,
               spec.restart_cost,
               cluster.types[type].name,
               gpus};
  };
  auto shares = [&](std::size_t i, std::size_t t, int* lo, int* hi, double* share) {
    const double n_avg = std::max(1.0, result.jobs[i].contention);
    *share = cluster.types[t].capacity() / n_avg;
    *lo = static_cast<int>(std::floor(*share));
    *hi = static_cast<int>(std::ceil(*share));
    if (*lo < 1) *lo = *hi = 1;
  };
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      // A type the job may not use has no isolated run: the job would never start there.
      if (!workload[i].allows_type(cluster.types[t].name)) continue;
      int lo, hi;
      double share;
      shares(i, t, &lo, &hi, &share);
      for (int g : {lo, hi})
        needed.emplace(key_of(workload[i], static_cast<int>(t), g),
                       Need{workload[i], static_cast<int>(t), g});
    }
  }
  std::vector<std::pair<Key, Need>> work(needed.begin(), needed.end());
  std::vector<double> jcts(work.size(), -1);
  std::vector<std::string> errors(work.size());
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t k = next++; k < work.size(); k = next++) {
      const Need& n = work[k].second;
      JobSpec alone = n.spec;
      alone.submit_time = 0;
      alone.max_gpus = n.gpus;
      if (alone.min_gpus > n.gpus) alone.min_gpus = n.gpus;
      if (alone.gpus > n.gpus) alone.gpus = n.gpus;
      try {
        if (catalog.get(n.spec.model).gpu(cluster.types[n.type].name)) {
          SimResult r = simulate(one_type_cluster(cluster, n.type, n.gpus), catalog, {alone}, iso);
          jcts[k] = r.jobs.front().jct;
        }
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    }
  };
  const unsigned threads =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), work.size()));
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  for (std::size_t k = 0; k < work.size(); ++k) {
    if (!errors[k].empty()) {
      throw Error(ExitStatus::software,
                  "isolated run of " + work[k].second.spec.name + ": " + errors[k]);
    }
    cache[work[k].first] = jcts[k];
  }
  auto isolated = [&](const JobSpec& spec, int type, int gpus) {
    return cache.at(key_of(spec, type, gpus));
  };
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    JobResult& jr = result.jobs[i];
    const JobSpec& spec = workload[i];
    // Waiting for the first round boundary is part of the shared JCT; an isolated run
    // that starts at a boundary waits a whole round, this job waited less.
    const double offset = std::fmod(spec.submit_time, options.round);
    double weight = 0, rho_sum = 0, jct_sum = 0;
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      if (!spec.allows_type(cluster.types[t].name)) continue;
      const int cap = cluster.types[t].capacity();
      int lo, hi;
      double share;
      shares(i, t, &lo, &hi, &share);
      double j;
      if (share < 1) {
        double one = isolated(spec, static_cast<int>(t), 1);
        if (one < 0) continue;
        j = one / share;
      } else {
        double a = isolated(spec, static_cast<int>(t), lo);
        double b = hi == lo ? a : isolated(spec, static_cast<int>(t), hi);
        if (a < 0 || b < 0) continue;
        j = a + (share - lo) * (b - a);
      }
      j = std::max(1.0, j - offset);
      weight += cap;
      jct_sum += cap * j;
      rho_sum += cap * (jr.jct / j);
    }
    if (weight <= 0) continue;
    if (options.reference) {
      jr.isolated_jct = jct_sum / weight;
      jr.rho = jr.jct / *jr.isolated_jct;
    } else {
      jr.isolated_jct = jct_sum / weight;
      jr.rho = rho_sum / weight;
    }
  }
}

}  // namespace sia
