#include "sim/fairness.hpp"

#include <cmath>
#include <map>
#include <tuple>

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
  std::map<Key, double> cache;  // isolated JCT for a submission at a round boundary
  auto isolated = [&](const JobSpec& spec, int type, int gpus) -> double {
    Key key{spec.model, static_cast<int>(spec.adaptivity), spec.batch_size, spec.gpus,
            spec.restart_cost, cluster.types[type].name, gpus};
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    JobSpec alone = spec;
    alone.submit_time = 0;
    alone.max_gpus = gpus;
    if (alone.min_gpus > gpus) alone.min_gpus = gpus;
    if (alone.gpus > gpus) alone.gpus = gpus;
    double jct = -1;
    const ModelInfo& m = catalog.get(spec.model);
    if (m.gpu(cluster.types[type].name)) {
      SimResult r = simulate(one_type_cluster(cluster, type, gpus), catalog, {alone}, iso);
      jct = r.jobs.front().jct;
    }
    cache[key] = jct;
    return jct;
  };
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    JobResult& jr = result.jobs[i];
    const JobSpec& spec = workload[i];
    const double n_avg = std::max(1.0, jr.contention);
    // Waiting for the first round boundary is part of the shared JCT; an isolated run
    // that starts at a boundary waits a whole round, this job waited less.
    const double offset = std::fmod(spec.submit_time, options.round);
    double weight = 0, rho_sum = 0, jct_sum = 0;
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      const int cap = cluster.types[t].capacity();
      const double share = cap / n_avg;
      const int lo = static_cast<int>(std::floor(share));
      const int hi = static_cast<int>(std::ceil(share));
      double j;
      if (lo < 1) {
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
