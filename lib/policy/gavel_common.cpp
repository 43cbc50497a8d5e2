#include "policy/gavel_common.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace sia::baseline {

namespace {

int nodes_for(int gpus, int gpus_per_node) {
  return gpus_per_node > 0 ? (gpus + gpus_per_node - 1) / gpus_per_node : 0;
}

Option option_of(const GoodputRow& row, const GoodputEntry& e, double batch) {
  Option o;
  o.type = e.config.type;
  o.gpus = e.config.gpus;
  o.entry = &e;
  o.estimated = e.throughput > 0 && batch > 0;
  o.rate = o.estimated ? e.throughput / batch : kUnknownRate;
  const double b0 = row.model.init_batch_size;
  o.progress_rate = e.raw_goodput > 0 && b0 > 0 ? e.raw_goodput / b0 : 0;
  return o;
}

}  // namespace

int Job::fastest() const {
  int best = -1;
  for (std::size_t k = 0; k < options.size(); ++k) {
    const Option& o = options[k];
    if (best < 0 || o.rate > options[best].rate ||
        (o.rate == options[best].rate && o.type == current_type &&
         options[best].type != current_type)) {
      best = static_cast<int>(k);
    }
  }
  return best;
}

double Job::remaining_seconds(const GoodputRow& row) const {
  if (!row.progress || !(row.progress->total > 0)) return -1;
  double rate = 0;
  for (const auto& o : options) rate = std::max(rate, o.progress_rate);
  if (!(rate > 0)) return -1;
  return std::max(0.0, row.progress->total - row.progress->done) / rate;
}

std::vector<Job> jobs_of(const GoodputMatrix& m, const std::optional<Allocation>& previous) {
  const Cluster& cluster = m.cluster;
  std::map<std::string, int> position;
  for (std::size_t k = 0; k < m.order.size(); ++k) {
    position.emplace(m.order[k], static_cast<int>(k));
  }
  std::vector<Job> jobs(m.jobs.size());
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const GoodputRow& row = m.jobs[i];
    Job& job = jobs[i];
    job.row = i;
    auto pos = position.find(row.job);
    job.order = pos == position.end() ? static_cast<int>(m.order.size() + i) : pos->second;
    const int ntypes = static_cast<int>(cluster.types.size());
    auto holds = [&](const GoodputEntry& e) {
      return e.config.type >= 0 && e.config.type < ntypes && e.config.gpus > 0 &&
             e.config.gpus <= cluster.types[e.config.type].capacity();
    };
    if (row.fixed_gpus > 0) {
      for (const auto& e : row.fixed) {
        if (holds(e) && e.config.gpus == row.fixed_gpus) {
          job.options.push_back(option_of(row, e, row.fixed_batch));
        }
      }
      if (job.options.empty()) {
        // No model on any type that holds it: the estimator's rigid entries (one per type,
        // at the fixed GPU count), at whatever rate they carry.
        for (const auto& e : row.entries) {
          if (holds(e) && e.config.gpus == row.fixed_gpus) {
            job.options.push_back(option_of(row, e, row.fixed_batch));
          }
        }
      }
    } else {
      // No tuned configuration: the smallest entry of each type.
      for (const auto& e : row.entries) {
        if (!holds(e)) continue;
        if (!job.options.empty() && job.options.back().type == e.config.type) continue;
        job.options.push_back(option_of(row, e, static_cast<double>(e.batch.global)));
      }
    }
    // One option per type, type order.
    std::stable_sort(job.options.begin(), job.options.end(),
                     [](const Option& a, const Option& b) { return a.type < b.type; });
    job.options.erase(
        std::unique(job.options.begin(), job.options.end(),
                    [](const Option& a, const Option& b) { return a.type == b.type; }),
        job.options.end());
    if (job.options.empty()) {
      const int want = row.fixed_gpus > 0 ? row.fixed_gpus : 1;
      bool any = false;
      for (const auto& t : cluster.types) any |= t.capacity() >= want;
      job.no_option = any ? "no throughput estimate for its " + std::to_string(want) +
                                "-GPU configuration on any GPU type"
                          : "no GPU type has " + std::to_string(want) + " GPUs";
    }
    std::optional<Config> now = row.current;
    if (!now && previous) {
      if (const JobAllocation* a = previous->find(row.job); a && a->config) {
        const auto& types = previous->cluster.types;
        if (a->config->type >= 0 && a->config->type < static_cast<int>(types.size())) {
          int t = cluster.type_index(types[a->config->type].name);
          if (t >= 0) now = Config{t, a->config->nodes, a->config->gpus};
        }
      }
    }
    if (now) {
      job.current_type = now->type;
      if (!row.preemptible) {
        for (std::size_t k = 0; k < job.options.size(); ++k) {
          if (job.options[k].type == now->type && job.options[k].gpus == now->gpus) {
            job.pinned = static_cast<int>(k);
          }
        }
      }
    }
  }
  return jobs;
}

GangPacker::GangPacker(const Cluster& cluster, bool by_nodes)
    : cluster_(cluster), by_nodes_(by_nodes) {
  for (const auto& t : cluster.types) free_.push_back(t.capacity());
  gangs_.resize(cluster.types.size());
}

bool GangPacker::packs(int type, int extra) const {
  const GpuType& t = cluster_.types[type];
  const int gpn = t.gpus_per_node;
  if (gpn <= 0) return false;
  std::vector<int> gangs = gangs_[type];
  gangs.push_back(extra);
  // Whole nodes first (any free node will do), then the remainders largest first, each on
  // the fullest node that still holds it.
  int whole = 0;
  std::vector<int> parts;
  for (int g : gangs) {
    whole += g / gpn;
    if (g % gpn) parts.push_back(g % gpn);
  }
  if (whole > t.node_count) return false;
  std::vector<int> room(t.node_count - whole, gpn);
  std::sort(parts.rbegin(), parts.rend());
  for (int p : parts) {
    int best = -1;
    for (std::size_t n = 0; n < room.size(); ++n) {
      if (room[n] >= p && (best < 0 || room[n] < room[best])) best = static_cast<int>(n);
    }
    if (best < 0) return false;
    room[best] -= p;
  }
  return true;
}

bool GangPacker::fits(int type, int gpus) const {
  if (type < 0 || type >= static_cast<int>(free_.size()) || gpus <= 0) return false;
  if (gpus > free_[type]) return false;
  return !by_nodes_ || packs(type, gpus);
}

bool GangPacker::add(int type, int gpus) {
  if (!fits(type, gpus)) return false;
  free_[type] -= gpus;
  gangs_[type].push_back(gpus);
  return true;
}

std::string GangPacker::describe_free() const {
  std::string s;
  for (std::size_t t = 0; t < free_.size(); ++t) {
    s += (s.empty() ? "" : ", ") + cluster_.types[t].name + " " + std::to_string(free_[t]);
  }
  return s;
}

JobAllocation allocated(const GoodputRow& row, const Option& o, const Cluster& cluster) {
  JobAllocation a;
  a.job = row.job;
  a.config = Config{o.type, nodes_for(o.gpus, cluster.types[o.type].gpus_per_node), o.gpus};
  a.batch = o.entry->batch;
  a.goodput = o.entry->goodput;
  return a;
}

std::string no_room_reason(const Job& job, const GangPacker& packer, const Cluster& cluster) {
  if (job.options.empty()) return job.no_option;
  int gpus = job.options.front().gpus;
  bool same = true;
  for (const auto& o : job.options) same &= o.gpus == gpus;
  bool enough_gpus = false;
  for (const auto& o : job.options) enough_gpus |= packer.free_gpus(o.type) >= o.gpus;
  std::string what = same ? std::to_string(gpus) + " free GPUs" : "room for its gang";
  std::string types;
  if (job.options.size() < cluster.types.size()) {
    for (const auto& o : job.options) {
      types += (types.empty() ? "" : "/") + cluster.types[o.type].name;
    }
  }
  std::string s = "no " + (types.empty() ? std::string("type") : types) + " has " + what;
  if (enough_gpus) s += " that pack onto its nodes";
  return s + " (free: " + packer.describe_free() + ")";
}

}  // namespace sia::baseline
