// Cluster: the GPU types and nodes a scheduler may hand out, as described by cluster.toml
// (or its JSON twin, a Cluster document). GPU types keep the order of the file: that order
// breaks ties everywhere (configuration columns, placement, reports). All nodes of one GPU
// type have the same number of GPUs; a cluster with mixed node sizes declares two types.
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/document.hpp"

namespace sia {

struct GpuType {
  std::string name;         // e.g. "t4", "a100", "rtx2080ti"
  std::string description;  // free text
  double memory_gb = 0;     // 0 when not given
  int gpus_per_node = 0;    // from the node groups
  int node_count = 0;       // nodes of this type
  int capacity() const { return gpus_per_node * node_count; }
};

struct NodeGroup {
  std::string gpu_type;
  int gpus_per_node = 0;
  int count = 0;
  std::string name_prefix;             // default "<gpu_type>-"
  std::vector<std::string> names;      // optional, exactly `count` names
  std::vector<std::string> addresses;  // optional: host names or IPs, exactly `count`
};

struct ClusterNode {
  std::string name;
  std::string address;  // how other nodes reach it (default: the name)
  int type = 0;         // index into Cluster::types
  int gpus = 0;
  int index_in_type = 0;  // 0-based position among the nodes of its type
};

class Cluster {
 public:
  std::string name;
  std::string description;
  std::vector<GpuType> types;
  std::vector<NodeGroup> groups;
  std::vector<ClusterNode> nodes;  // group order, then index within the group

  int type_index(const std::string& type_name) const;  // -1 if unknown
  int total_gpus() const;
  std::vector<int> nodes_of_type(int type) const;  // indices into `nodes`
  std::string type_names() const;                  // "t4, a100, rtx2080ti"

  // Builds the derived fields (types' node counts, expanded nodes) and validates;
  // errors cite `file` and the field, with status `status`.
  void finalize(const std::string& file, ExitStatus status);
};

// Reads cluster.toml or a Cluster document. Validation errors exit 78 (configuration).
Cluster read_cluster(const std::string& file);
Cluster cluster_from_document(const Document& doc);
Cluster parse_cluster(const Node& data);
nlohmann::json cluster_to_json(const Cluster& cluster);

}  // namespace sia
