#include "sim/workload_transform.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"

namespace sia {

namespace {

// SplitMix64 (Steele, Lea and Flood, OOPSLA '14): a well-mixed 64-bit hash step.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void check_share(const char* flag, double v) {
  if (!(v >= 0 && v <= 1)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", v);
    throw Error(ExitStatus::usage,
                std::string(flag) + ": expected a fraction from 0 to 1, got " + got);
  }
}

void check_scale(int k) {
  if (k < 1 || k > kMaxScale) {
    throw Error(ExitStatus::usage, "--scale: expected an integer from 1 to " +
                                       std::to_string(kMaxScale) + ", got " + std::to_string(k));
  }
}

}  // namespace

double category_draw(const std::string& job, std::uint64_t seed) {
  std::uint64_t h = mix(seed);
  for (unsigned char c : job) h = mix(h ^ c);
  return static_cast<double>(h >> 11) * 0x1.0p-53;  // 53 bits: uniform in [0, 1)
}

void assign_categories(std::vector<JobSpec>& jobs, double rigid_share, double strong_share,
                       std::uint64_t seed) {
  check_share("--rigid-share", rigid_share);
  check_share("--strong-scaling-share", strong_share);
  if (rigid_share + strong_share > 1 + 1e-12) {
    throw Error(ExitStatus::usage,
                "--rigid-share and --strong-scaling-share: expected shares summing to at most 1");
  }
  if (rigid_share == 0 && strong_share == 0) return;
  for (auto& s : jobs) {
    const double u = category_draw(s.name, seed);
    Adaptivity a = s.adaptivity;
    if (u < rigid_share) {
      a = Adaptivity::rigid;
    } else if (u < rigid_share + strong_share) {
      a = Adaptivity::strong_scaling;
    }
    if (a != Adaptivity::adaptive && !(s.gpus > 0 && s.batch_size > 0)) {
      throw Error(ExitStatus::data, "job " + s.name + ": to make it " + to_string(a) +
                                        ", expected its tuned GPU count and batch size "
                                        "(num_replicas, batch_size)");
    }
    s.adaptivity = a;
  }
}

std::vector<JobSpec> scale_workload(const std::vector<JobSpec>& jobs, int k) {
  check_scale(k);
  if (k == 1) return jobs;
  std::vector<JobSpec> out;
  out.reserve(jobs.size() * k);
  for (const auto& s : jobs) {
    for (int c = 0; c < k; ++c) {
      JobSpec copy = s;
      copy.name = s.name + "-c" + std::to_string(c);
      out.push_back(std::move(copy));
    }
  }
  // The copies of one job sit together; jobs stay in submission order.
  std::stable_sort(out.begin(), out.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit_time < b.submit_time;
  });
  return out;
}

Cluster scale_cluster(const Cluster& cluster, int k) {
  check_scale(k);
  if (k == 1) return cluster;
  Cluster c = cluster;
  c.name += "-x" + std::to_string(k);
  for (auto& g : c.groups) {
    g.count *= k;
    g.names.clear();
    g.addresses.clear();
  }
  c.finalize(c.name, ExitStatus::config);
  return c;
}

}  // namespace sia
