#include "model/batch_candidates.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <unordered_map>

namespace sia {

namespace {

// Everything a table depends on, compared bit for bit (two NaN parameters of the same bits
// share a table, as they would give the same numbers).
struct Key {
  std::array<double, 7> params;
  double init_batch_size;
  double max_batch;
  int nodes, replicas, min_local, max_local;
  bool tune;

  bool operator==(const Key& o) const {
    return std::memcmp(params.data(), o.params.data(), sizeof(double) * 7) == 0 &&
           std::memcmp(&init_batch_size, &o.init_batch_size, sizeof(double)) == 0 &&
           std::memcmp(&max_batch, &o.max_batch, sizeof(double)) == 0 && nodes == o.nodes &&
           replicas == o.replicas && min_local == o.min_local && max_local == o.max_local &&
           tune == o.tune;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the 64-bit words
    auto mix = [&h](std::uint64_t w) {
      h ^= w;
      h *= 1099511628211ull;
    };
    auto bits = [](double d) {
      std::uint64_t w;
      std::memcpy(&w, &d, sizeof w);
      return w;
    };
    for (double p : k.params) mix(bits(p));
    mix(bits(k.init_batch_size));
    mix(bits(k.max_batch));
    mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.nodes)) << 32) |
        static_cast<std::uint32_t>(k.replicas));
    mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.min_local)) << 32) |
        static_cast<std::uint32_t>(k.max_local));
    mix(k.tune ? 1 : 0);
    return static_cast<std::size_t>(h);
  }
};

CandidateTable build(const PerfParams& params, double init_batch_size, int nodes, int replicas,
                     const BatchLimits& limits) {
  constexpr int kCandidates = 50;
  double cand[kCandidates];
  const double min_b =
      limits.tune ? std::max(init_batch_size, static_cast<double>(limits.min_local) * replicas)
                  : limits.max_batch;
  geomspace(min_b, limits.max_batch, kCandidates, cand);
  CandidateTable table;
  const int n = limits.tune ? kCandidates : 1;
  for (int i = 0; i < n; ++i) {
    BatchCandidate c;
    split_batch(cand[i], replicas, limits.max_local, init_batch_size, &c.local_bsz, &c.accum_steps);
    c.batch_size = static_cast<double>(replicas) * c.local_bsz * (c.accum_steps + 1);
    if (i == 0) table.first = c;
    if (c.local_bsz < limits.min_local || c.local_bsz > limits.max_local) continue;
    c.throughput = throughput(params, nodes, replicas, c.local_bsz, c.accum_steps);
    table.valid.push_back(c);
  }
  return table;
}

}  // namespace

const CandidateTable& candidate_table(const PerfParams& params, double init_batch_size, int nodes,
                                      int replicas, const BatchLimits& limits) {
  thread_local std::unordered_map<Key, CandidateTable, KeyHash> tables;
  Key key{params.to_array(), init_batch_size,  limits.max_batch, nodes,
          replicas,          limits.min_local, limits.max_local, limits.tune};
  if (auto it = tables.find(key); it != tables.end()) return it->second;
  if (tables.size() >= kMaxTables) tables.clear();
  return tables.emplace(key, build(params, init_batch_size, nodes, replicas, limits)).first->second;
}

}  // namespace sia
