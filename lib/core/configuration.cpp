#include "core/configuration.hpp"

#include "core/cluster.hpp"

namespace sia {

static bool is_power_of_two(int x) {
  return x > 0 && (x & (x - 1)) == 0;
}

int largest_virtual_node(int gpus_per_node) {
  int p = 1;
  while (p * 2 <= gpus_per_node) p *= 2;
  return p;
}

std::vector<int> virtual_node_sizes(int gpus_per_node) {
  std::vector<int> out;
  for (int bit = 30; bit >= 0; --bit) {
    if (gpus_per_node & (1 << bit)) out.push_back(1 << bit);
  }
  return out;
}

std::vector<Config> configs_for_type(int type, int gpus_per_node, int node_count,
                                     const ConfigLimits& limits) {
  std::vector<Config> out;
  if (gpus_per_node <= 0 || node_count <= 0) return out;
  const int largest = largest_virtual_node(gpus_per_node);
  for (int g = 1; g <= largest; g *= 2) {
    if (g > limits.max_gpus || limits.max_nodes < 1) break;
    out.push_back({type, 1, g});
  }
  const int first_whole = is_power_of_two(gpus_per_node) ? 2 : 1;
  for (int k = first_whole; k <= node_count; ++k) {
    if (k > limits.max_nodes) break;
    long long gpus = static_cast<long long>(k) * gpus_per_node;
    if (gpus > limits.max_gpus) break;
    out.push_back({type, k, static_cast<int>(gpus)});
  }
  return out;
}

std::vector<Config> configs_for_cluster(const Cluster& cluster, const ConfigLimits& limits) {
  std::vector<Config> out;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    auto part = configs_for_type(static_cast<int>(t), cluster.types[t].gpus_per_node,
                                 cluster.types[t].node_count, limits);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

bool is_whole_nodes(const Config& c, int gpus_per_node) {
  if (c.nodes == 1) return c.gpus >= 1 && c.gpus <= gpus_per_node;
  return c.gpus == c.nodes * gpus_per_node;
}

// GPUs of a node usable by items of size >= s: sum over its virtual nodes of floor(v/s)*s.
static int block_capacity(int gpus_per_node, int s) {
  int total = 0;
  for (int v : virtual_node_sizes(gpus_per_node)) total += (v / s) * s;
  return total;
}

std::vector<CapacityRow> capacity_rows(const Cluster& cluster) {
  std::vector<CapacityRow> rows;
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    const auto& type = cluster.types[t];
    rows.push_back({static_cast<int>(t), 1, type.capacity()});
    if (is_power_of_two(type.gpus_per_node)) continue;
    for (int s = 2; s <= largest_virtual_node(type.gpus_per_node); s *= 2) {
      int cap = block_capacity(type.gpus_per_node, s);
      if (cap < type.gpus_per_node) {
        rows.push_back({static_cast<int>(t), s, cap * type.node_count});
      }
    }
  }
  return rows;
}

int row_usage(const CapacityRow& row, const Config& c, int gpus_per_node) {
  if (c.type != row.type) return 0;
  if (row.size_class == 1) return c.gpus;
  const bool whole = c.gpus >= gpus_per_node && c.gpus == c.nodes * gpus_per_node;
  if (whole) return c.nodes * block_capacity(gpus_per_node, row.size_class);
  if (c.nodes == 1) return c.gpus >= row.size_class ? c.gpus : 0;
  // A multi-node shape that is not whole nodes (a rigid job's packed placement): count its
  // full nodes as whole and the remainder as one block.
  int full = c.gpus / gpus_per_node;
  int rest = c.gpus - full * gpus_per_node;
  int use = full * block_capacity(gpus_per_node, row.size_class);
  if (rest >= row.size_class) use += rest;
  return use;
}

std::string format_config(const Config& c, const Cluster& cluster) {
  std::string type = c.type >= 0 && c.type < static_cast<int>(cluster.types.size())
                         ? cluster.types[c.type].name
                         : std::to_string(c.type);
  return "(" + std::to_string(c.nodes) + ", " + std::to_string(c.gpus) + ", " + type + ")";
}

}  // namespace sia
