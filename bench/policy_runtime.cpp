// Sia policy runtime on synthetic rounds shaped like the paper's scaling study (3 GPU
// types; 64 .. 2,048 GPUs; about one active job per two GPUs): per cluster size, the
// median and p95 of the solve time over 20 rounds, the worst gap and the statuses; the
// whole in-process policy as a controller runs it (estimate with the jobs' fits cached
// from the round before, solve, place); then
// Gavel's throughput LP on the same matrices, answered with the simplex's vertex (the
// default profile) and with the analytic centre of the optimal face after it (--compat
// reference); then the wall time of the whole `sia-estimate | sia-solve |
// sia-place` pipeline through pipes.
//   build/bin/bench_policy_runtime [BIN_DIR [KEEP_DIR]]
//     BIN_DIR holds the sia-* programs (default: beside this binary); with KEEP_DIR the
//     first round of each size is left there (cluster-N.json, jobs-N.json and the
//     fit-cached jobs-N.json.warm), to profile one stage by hand.
//   SIA_BENCH_SMOKE=1: 64 GPUs only, 2 rounds, one pipeline run (bench/smoke.hpp).
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "model/estimator.hpp"
#include "os/atomic_file.hpp"
#include "place/placer.hpp"
#include "policy/gavel_common.hpp"
#include "policy/sia_policy.hpp"
#include "smoke.hpp"
#include "synthetic.hpp"

using namespace sia;
using namespace sia::bench;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::string bin = argc > 1 ? argv[1] : fs::read_symlink("/proc/self/exe").parent_path().string();
  Catalog catalog(default_catalog_dir());
  const int rounds = smoke() ? 2 : 20;
  const std::vector<int> scales = smoke() ? std::vector<int>{1} : std::vector<int>{1, 4, 8, 16, 32};
  const int pipeline_runs = smoke() ? 1 : 5;
  const PolicyOptions defaults;
  std::printf(
      "Solve (in-process, warm fits; node limit %d, iteration limit %d, time limit %g s, gap "
      "target %g)\n",
      defaults.node_limit, defaults.iteration_limit, defaults.time_limit, defaults.mip_gap);
  std::printf("%6s %6s %8s %10s %10s %10s %10s  %s\n", "GPUs", "jobs", "columns", "median ms",
              "p95 ms", "max ms", "max gap", "statuses");
  const bool keep = argc > 2;
  fs::path tmp = keep ? fs::path(argv[2])
                      : fs::temp_directory_path() / ("sia-bench-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::map<int, std::pair<std::string, std::string>> files;
  // Gavel's LP per scale: {vertex, centre} times in ms.
  std::map<int, std::pair<std::vector<double>, std::vector<double>>> gavel;
  // In-process policy per scale: estimate (warm fits), solve, place and their sum, in ms.
  std::map<int, std::array<std::vector<double>, 4>> stages;
  for (int scale : scales) {
    const int njobs = scale * 32;
    std::vector<double> t;
    double worst_gap = 0;
    std::size_t columns = 0;
    std::map<std::string, int> statuses;
    for (int r = 0; r < rounds; ++r) {
      SyntheticRound round = synthetic_round(catalog, scale, njobs, 100 + r);
      Estimator est(round.cluster, catalog);
      est.estimate(round.jobs);  // fits the jobs' models, as the round before would have
      const double e0 = now_seconds();
      GoodputMatrix m = est.estimate(round.jobs);
      const double e1 = now_seconds();
      SiaPolicy sia(defaults);
      Allocation a = sia.allocate(m, std::nullopt);
      const double s1 = now_seconds();
      place(a, m.cluster, std::nullopt);
      const double p1 = now_seconds();
      auto& st = stages[scale];
      st[0].push_back(1e3 * (e1 - e0));
      st[1].push_back(1e3 * (s1 - e1));
      st[2].push_back(1e3 * (p1 - s1));
      st[3].push_back(1e3 * (p1 - e0));
      t.push_back(1e3 * sia.last_solve_seconds());
      worst_gap = std::max(worst_gap, a.gap);
      ++statuses[sia.last_solution().status + "/" + sia.last_solution().method];
      const std::vector<baseline::Job> jobs = baseline::jobs_of(m, std::nullopt);
      for (bool centre : {false, true}) {
        const double t0 = now_seconds();
        baseline::max_sum_throughput(jobs, m.cluster, solve_limits(defaults), centre);
        auto& out = centre ? gavel[scale].second : gavel[scale].first;
        out.push_back(1e3 * (now_seconds() - t0));
      }
      columns = 0;
      for (const auto& row : m.jobs) columns += row.entries.size();
      if (r == 0) {
        nlohmann::json jobs = nlohmann::json::array();
        for (const auto& j : round.jobs) jobs.push_back(job_state_to_json(j));
        std::string jf = (tmp / ("jobs-" + std::to_string(scale) + ".json")).string();
        std::string cf = (tmp / ("cluster-" + std::to_string(scale) + ".json")).string();
        os::write_file_atomic(jf, dump_document("Jobs", {}, {{"jobs", jobs}}, false));
        os::write_file_atomic(cf,
                              dump_document("Cluster", {}, cluster_to_json(round.cluster), false));
        files[scale] = {cf, jf};
      }
    }
    std::string st;
    for (const auto& [k, v] : statuses) st += k + " x" + std::to_string(v) + " ";
    std::printf("%6d %6d %8zu %10.2f %10.2f %10.2f %10.1e  %s\n", 64 * scale, njobs, columns,
                median(t), percentile(t, 95), percentile(t, 100), worst_gap, st.c_str());
  }
  std::printf(
      "\nThe policy in process (estimate with warm fits, solve, place), median / p95 / max "
      "ms\n");
  std::printf("%6s %20s %20s %20s %20s\n", "GPUs", "estimate", "solve", "place", "total");
  for (const auto& [scale, st] : stages) {
    std::printf("%6d", 64 * scale);
    for (const auto& v : st) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.2f / %.2f / %.2f", median(v), percentile(v, 95),
                    percentile(v, 100));
      std::printf(" %20s", cell);
    }
    std::printf("\n");
  }
  std::printf(
      "\nGavel's throughput LP (in-process, same matrices): the simplex's vertex, and "
      "with the analytic centre after it (--compat reference)\n");
  std::printf("%6s %12s %12s %14s %14s\n", "GPUs", "vertex med", "vertex p95", "centre med",
              "centre p95");
  for (const auto& [scale, t] : gavel) {
    std::printf("%6d %12.2f %12.2f %14.2f %14.2f\n", 64 * scale, median(t.first),
                percentile(t.first, 95), median(t.second), percentile(t.second, 95));
  }
  std::printf(
      "\nPipeline through pipes: sia-estimate | sia-solve | sia-place (fits cached in "
      "the jobs file; median of %d)\n",
      pipeline_runs);
  std::printf("%6s %12s\n", "GPUs", "median ms");
  for (auto& [scale, f] : files) {
    // Warm the fit cache the way a controller would: save the jobs with their models.
    std::string warm = f.second + ".warm";
    std::string prep = bin + "/sia-estimate --cluster " + f.first + " " + f.second +
                       " --save-jobs " + warm + " > /dev/null";
    if (std::system(prep.c_str()) != 0) {
      std::fprintf(stderr, "bench_policy_runtime: failed: %s\n", prep.c_str());
      return 1;
    }
    std::string cmd = bin + "/sia-estimate --cluster " + f.first + " " + warm + " | " + bin +
                      "/sia-solve | " + bin + "/sia-place > /dev/null";
    std::vector<double> t;
    for (int k = 0; k < pipeline_runs; ++k) {
      double t0 = now_seconds();
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "bench_policy_runtime: failed: %s\n", cmd.c_str());
        return 1;
      }
      t.push_back(1e3 * (now_seconds() - t0));
    }
    std::printf("%6d %12.1f\n", 64 * scale, median(t));
  }
  if (!keep) fs::remove_all(tmp);
  return 0;
}
