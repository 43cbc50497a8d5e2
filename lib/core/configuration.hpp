// Configurations: the paper's 3-tuple (n, r, t) -- n nodes holding r GPUs of type t -- and
// the valid set per GPU type: single-node powers of two up to the largest virtual node,
// then whole-node multiples. A node whose GPU count is not a power of two is split into
// virtual nodes of power-of-two sizes (6 -> 4 + 2), so single-node jobs never need a size
// the node cannot hold as one block; whole-node jobs take physical nodes.
//
// With virtual nodes, one capacity row per type is not enough to guarantee a placement
// (three 4-GPU jobs do not fit on two 6-GPU nodes although 12 <= 12). For such types
// capacity_rows() adds one row per size class s: GPUs of jobs of size >= s must fit in the
// blocks of size >= s. Items and blocks are powers of two, so these rows make every
// allocation that satisfies them placeable without splitting (first-fit decreasing).
// Thread-safety: plain values and pure functions.
#pragma once

#include <climits>
#include <string>
#include <vector>

namespace sia {

class Cluster;

struct Config {
  int type = 0;   // index into Cluster::types
  int nodes = 0;  // n
  int gpus = 0;   // r (total over the n nodes)
  bool operator==(const Config&) const = default;
};

// 6 -> {4, 2}; 8 -> {8}; 7 -> {4, 2, 1}. Descending.
std::vector<int> virtual_node_sizes(int gpus_per_node);
// Largest power of two <= gpus_per_node.
int largest_virtual_node(int gpus_per_node);

struct ConfigLimits {
  int max_nodes = INT_MAX;  // per configuration (e.g. the largest node count ever profiled)
  int max_gpus = INT_MAX;   // per configuration
};

// The valid configurations of one GPU type with `node_count` nodes of `gpus_per_node`
// GPUs, ascending in GPUs: (1,1), (1,2), (1,4), ..., (1,P), then (k, k*G) for k >= 1
// (k = 1 only when G is not a power of two).
std::vector<Config> configs_for_type(int type, int gpus_per_node, int node_count,
                                     const ConfigLimits& limits = {});
// All types of a cluster, concatenated in type order.
std::vector<Config> configs_for_cluster(const Cluster& cluster, const ConfigLimits& limits = {});

// True if (nodes, gpus) is a shape the placer can realise on this type: a single-node block
// of at most the node size, or whole nodes.
bool is_whole_nodes(const Config& c, int gpus_per_node);

struct CapacityRow {
  int type = 0;
  int size_class = 1;  // 1 = the plain GPU count row
  int capacity = 0;
};

// One row per type (size class 1, capacity = all its GPUs), plus the size-class rows
// described above for types whose nodes are not a power of two.
std::vector<CapacityRow> capacity_rows(const Cluster& cluster);
// How much of `row` a configuration uses.
int row_usage(const CapacityRow& row, const Config& c, int gpus_per_node);

std::string format_config(const Config& c, const Cluster& cluster);  // "(2, 8, t4)"

}  // namespace sia
