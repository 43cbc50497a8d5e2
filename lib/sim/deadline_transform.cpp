#include "sim/deadline_transform.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "sim/workload_transform.hpp"

namespace sia {

namespace {

constexpr double kHour = 3600;
// Decorrelate the draws (each hashes the job's name) from each other and from --rigid-share's.
constexpr std::uint64_t kFactorStream = 0x6a09e667f3bcc909ULL;
constexpr std::uint64_t kShareStream = 0xbb67ae8584caa73bULL;

[[noreturn]] void bad_draw(const std::string& text) {
  throw Error(ExitStatus::usage,
              "--deadlines: expected SHARE[:SEED], a fraction from 0 to 1 and an optional "
              "non-negative integer seed, got \"" +
                  text + "\"");
}

}  // namespace

DeadlineDraw parse_deadline_draw(const std::string& text) {
  DeadlineDraw d;
  const std::size_t colon = text.find(':');
  const std::string share = text.substr(0, colon);
  const char* end = share.data() + share.size();
  auto r = std::from_chars(share.data(), end, d.share);
  if (share.empty() || r.ec != std::errc() || r.ptr != end || !(d.share >= 0 && d.share <= 1)) {
    bad_draw(text);
  }
  if (colon != std::string::npos) {
    const std::string seed = text.substr(colon + 1);
    const char* send = seed.data() + seed.size();
    auto s = std::from_chars(seed.data(), send, d.seed);
    if (seed.empty() || s.ec != std::errc() || s.ptr != send) bad_draw(text);
  }
  return d;
}

double deadline_factor(const std::string& name, std::uint64_t seed) {
  return 0.5 + 1.5 * category_draw(name, seed ^ kFactorStream);
}

double ideal_fair_share_seconds(const JobSpec& spec, const ModelInfo& model, const Cluster& cluster,
                                int n) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& t : cluster.types) {
    const ModelGpu* g = model.gpu(t.name);
    if (!g || !spec.allows_type(t.name) || t.capacity() <= 0) continue;
    const double throughput = g->single_gpu_throughput();
    if (!(throughput > 0)) continue;
    double share = static_cast<double>(t.capacity()) / std::max(1, n);
    if (g->max_profiled_nodes > 0) {
      share = std::min(share, static_cast<double>(g->max_profiled_nodes * t.gpus_per_node));
    }
    best = std::min(best, model.target_progress() * model.init_batch_size * model.slowdown /
                              (share * throughput));
  }
  if (!std::isfinite(best)) {
    throw Error(ExitStatus::data, "job " + spec.name + ": --deadlines: no GPU type of " +
                                      cluster.name + " has measurements of model " + model.name);
  }
  return best;
}

void assign_deadlines(std::vector<JobSpec>& jobs, const DeadlineDraw& draw, const Cluster& cluster,
                      const Catalog& catalog) {
  if (!(draw.share > 0)) return;
  std::size_t first = 0;  // the first job submitted within the hour before job i
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    JobSpec& s = jobs[i];
    while (jobs[first].submit_time < s.submit_time - kHour) ++first;
    if (s.deadline || s.job_class == JobClass::guaranteed) continue;
    if (!(category_draw(s.name, draw.seed ^ kShareStream) < draw.share)) continue;
    const ModelInfo& m = catalog.get(s.model, "job " + s.name);
    const int n = static_cast<int>(i - first + 1);
    s.job_class = JobClass::guaranteed;
    s.deadline = s.submit_time +
                 deadline_factor(s.name, draw.seed) * ideal_fair_share_seconds(s, m, cluster, n);
  }
}

}  // namespace sia
