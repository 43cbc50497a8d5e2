#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace sia::bench {

Cluster scaled_hetero_cluster(int scale) {
  Cluster c;
  c.name = "sia-hetero-64x" + std::to_string(scale);
  const struct {
    const char* type;
    int gpn;
    int count;
  } groups[] = {{"t4", 4, 6}, {"a100", 8, 2}, {"rtx2080ti", 8, 3}};
  for (const auto& g : groups) {
    GpuType t;
    t.name = g.type;
    t.gpus_per_node = g.gpn;
    c.types.push_back(t);
    NodeGroup ng;
    ng.gpu_type = g.type;
    ng.gpus_per_node = g.gpn;
    ng.count = g.count * scale;
    ng.name_prefix = std::string(g.type) + "-";
    c.groups.push_back(ng);
  }
  c.finalize("synthetic", ExitStatus::software);
  return c;
}

SyntheticRound synthetic_round(const Catalog& catalog, int scale, int njobs, unsigned seed) {
  SyntheticRound r;
  r.cluster = scaled_hetero_cluster(scale);
  std::mt19937 rng(seed);
  const std::pair<const char*, double> mix[] = {{"cifar10", 0.80},
                                                {"deepspeech2", 0.07},
                                                {"bert", 0.06},
                                                {"yolov3", 0.04},
                                                {"imagenet", 0.03}};
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<int> free(r.cluster.types.size());
  for (std::size_t t = 0; t < free.size(); ++t) free[t] = r.cluster.types[t].capacity();
  for (int i = 0; i < njobs; ++i) {
    double x = u(rng), acc = 0;
    const char* model = mix[0].first;
    for (const auto& [m, p] : mix) {
      acc += p;
      if (x <= acc) {
        model = m;
        break;
      }
    }
    const ModelInfo& info = catalog.get(model);
    JobState j;
    j.spec.name = std::string(model) + "-" + std::to_string(i);
    j.spec.model = model;
    j.age = 60.0 * (1 + static_cast<int>(u(rng) * 240));
    if (u(rng) < 0.25) {  // just submitted
      r.jobs.push_back(std::move(j));
      continue;
    }
    int t = static_cast<int>(u(rng) * r.cluster.types.size());
    const ModelGpu* g = info.gpu(r.cluster.types[t].name);
    const int gpn = r.cluster.types[t].gpus_per_node;
    int want = 1 << static_cast<int>(u(rng) * 5);  // 1 .. 16
    if (want > gpn) want = (want / gpn) * gpn;
    // Observations: a dozen real rows of placements this job has "run".
    for (const auto& row : g->placements) {
      if (row.replicas <= want && row.nodes <= 2 && u(rng) < 0.04) {
        j.observations.push_back(
            {g->name, row.nodes, row.replicas, row.local_bsz, row.step_time, row.sync_time});
      }
    }
    if (j.observations.empty()) {
      const auto& row = g->placements.front();
      j.observations.push_back(
          {g->name, row.nodes, row.replicas, row.local_bsz, row.step_time, row.sync_time});
    }
    const auto& val = info.validation[static_cast<std::size_t>(u(rng) * info.validation.size())];
    const auto& ep = val.epochs[static_cast<std::size_t>(u(rng) * val.epochs.size())];
    j.gradient = GradientStats{ep.grad_sqr, ep.grad_var};
    j.restarts = static_cast<int>(u(rng) * 4);
    if (free[t] >= want) {
      free[t] -= want;
      std::vector<int> placement;
      for (int left = want; left > 0; left -= gpn) placement.push_back(std::min(left, gpn));
      j.current = CurrentAllocation{r.cluster.types[t].name, placement};
    }
    r.jobs.push_back(std::move(j));
  }
  return r;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t rank = static_cast<std::size_t>(std::ceil(q / 100.0 * v.size()));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

double median(std::vector<double> v) {
  return percentile(std::move(v), 50);
}

}  // namespace sia::bench
