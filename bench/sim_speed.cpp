// Simulator speed: one 8-hour, 160-job workload (Philly workload-1) on the heterogeneous
// 64-GPU cluster with the Sia policy, with and without the isolated runs behind
// finish-time fairness, in both profiles; then a 48-hour, 960-job workload made of six
// Saturn workloads laid end to end (8 hours apart) -- the length of the paper's newTrace.
// Each case runs in a process of its own (this program again, with the case's number), so
// none starts with the fits and batch tables an earlier one memoised.
//   build/bin/bench_sim_speed [DATA_DIR [CASE]]
//   SIA_BENCH_SMOKE=1: each workload's first 12 jobs only (bench/smoke.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/cluster.hpp"
#include "sim/simulator.hpp"
#include "sim/workload.hpp"
#include "smoke.hpp"
#include "synthetic.hpp"

using namespace sia;
using namespace sia::bench;

static void run(const char* label, const Cluster& c, const Catalog& cat,
                const std::vector<JobSpec>& w, bool reference, bool fairness) {
  SimOptions o;
  o.compat = reference ? Compat::reference : Compat::standard;
  o.fairness = fairness;
  double t0 = now_seconds();
  SimResult r = simulate(c, cat, w, o);
  double t = now_seconds() - t0;
  std::printf("%-34s %-9s %-8s %6zu jobs %9.2f s   avg JCT %.3f h, %d rounds\n", label,
              reference ? "reference" : "default", fairness ? "fairness" : "-", w.size(), t,
              r.summary.avg_jct / 3600, r.summary.rounds);
}

int main(int argc, char** argv) {
  std::string data = argc > 1 ? argv[1] : default_data_dir();
  constexpr int kCases = 6;
  if (argc <= 2) {
    for (int k = 0; k < kCases; ++k) {
      const std::string cmd = "'" + std::string(argv[0]) + "' '" + data + "' " + std::to_string(k);
      if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "bench_sim_speed: case %d failed: %s\n", k, cmd.c_str());
        return 1;
      }
    }
    return 0;
  }
  const int only = std::atoi(argv[2]);
  int index = 0;
  auto wanted = [&] { return index++ == only; };
  Catalog cat(data + "/models");
  Cluster c = read_cluster(data + "/clusters/sia-hetero-64.toml");
  auto philly = read_workload(data + "/workloads/philly/workload-1.csv", cat);
  const std::size_t smoke_jobs = 12;
  if (smoke() && philly.size() > smoke_jobs) philly.resize(smoke_jobs);
  for (bool ref : {false, true}) {
    for (bool fair : {false, true}) {
      if (wanted()) run("philly/workload-1 (8 h)", c, cat, philly, ref, fair);
    }
  }
  std::vector<JobSpec> long_w;
  for (int k = 0; k < 6; ++k) {
    auto part =
        read_workload(data + "/workloads/saturn/workload-" + std::to_string(k + 1) + ".csv", cat);
    for (auto& j : part) {
      j.name = "w" + std::to_string(k + 1) + "-" + j.name;
      j.submit_time += k * 8 * 3600.0;
      long_w.push_back(j);
    }
  }
  if (smoke() && long_w.size() > smoke_jobs) long_w.resize(smoke_jobs);
  for (bool ref : {false, true}) {
    if (wanted()) run("saturn 1-6 end to end (48 h)", c, cat, long_w, ref, true);
  }
  return 0;
}
