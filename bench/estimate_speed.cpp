// How long sia-estimate's work takes on rounds shaped like the paper's scaling study:
// cold (every job's models fitted from its observations) and warm (fits cached in the
// jobs' state, as the controller keeps them between rounds), median of 5 repetitions.
//   build/bin/bench_estimate_speed [CATALOG_DIR]
// SIA_BENCH_SMOKE=1: 64 GPUs only, one repetition (bench/smoke.hpp).
#include <cstdio>
#include <vector>

#include "model/estimator.hpp"
#include "smoke.hpp"
#include "synthetic.hpp"

using namespace sia;
using namespace sia::bench;

int main(int argc, char** argv) {
  Catalog catalog(argc > 1 ? argv[1] : default_catalog_dir());
  std::printf("%6s %6s %8s %12s %12s\n", "GPUs", "jobs", "entries", "cold (ms)", "warm (ms)");
  const std::vector<int> scales = smoke() ? std::vector<int>{1} : std::vector<int>{1, 4, 8, 16, 32};
  const int reps = smoke() ? 1 : 5;
  for (int scale : scales) {
    const int njobs = scale * 32 - scale;  // ~1,000 at 2,048 GPUs
    std::vector<double> cold, warm;
    std::size_t entries = 0;
    for (int rep = 0; rep < reps; ++rep) {
      SyntheticRound r = synthetic_round(catalog, scale, njobs, 7 + rep);
      Estimator est(r.cluster, catalog);
      double t0 = now_seconds();
      GoodputMatrix m = est.estimate(r.jobs);
      double t1 = now_seconds();
      est.estimate(r.jobs);
      double t2 = now_seconds();
      cold.push_back(1e3 * (t1 - t0));
      warm.push_back(1e3 * (t2 - t1));
      entries = 0;
      for (const auto& row : m.jobs) entries += row.entries.size();
    }
    std::printf("%6d %6d %8zu %12.1f %12.1f\n", 64 * scale, njobs, entries, median(cold),
                median(warm));
  }
  return 0;
}
