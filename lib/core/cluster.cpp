#include "core/cluster.hpp"

#include "core/names.hpp"

namespace {
// GPU type and node names in a cluster file.
constexpr std::size_t kMaxClusterName = 128;
}  // namespace

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sia {

int Cluster::type_index(const std::string& type_name) const {
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i].name == type_name) return static_cast<int>(i);
  }
  return -1;
}

int Cluster::total_gpus() const {
  int total = 0;
  for (const auto& t : types) total += t.capacity();
  return total;
}

std::vector<int> Cluster::nodes_of_type(int type) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].type == type) out.push_back(static_cast<int>(i));
  }
  return out;
}

std::string Cluster::type_names() const {
  std::string s;
  for (const auto& t : types) {
    if (!s.empty()) s += ", ";
    s += t.name;
  }
  return s;
}

Cluster parse_cluster(const Node& data) {
  Cluster c;
  if (!data.is_object()) data.expected("a table describing the cluster");
  data.only_keys({"name", "description", "gpu_types", "node_groups"});
  c.name = data.string_or("name", "");
  c.description = data.string_or("description", "");
  if (auto types = data.get("gpu_types")) {
    types->each([&](const Node& t) {
      GpuType g;
      // gpus_per_node, nodes and gpus: derived, written by cluster_to_json, ignored here.
      t.only_keys({"name", "description", "memory_gb", "gpus_per_node", "nodes", "gpus"});
      Node name = t.at("name");
      g.name = name.as_string();
      if (!valid_name(g.name, kMaxClusterName))
        name.expected("a GPU type name of " + std::string(kNameRule));
      if (c.type_index(g.name) >= 0) name.fail("duplicate GPU type \"" + g.name + "\"");
      g.description = t.string_or("description", "");
      if (auto m = t.get("memory_gb")) {
        g.memory_gb = m->positive_number();
        if (g.memory_gb > 1e6) m->expected("at most 1000000 GB");
      }
      c.types.push_back(g);
    });
  }
  Node groups = data.at("node_groups");
  if (groups.size() == 0) groups.expected("at least one node group");
  const bool declared_types = !c.types.empty();
  groups.each([&](const Node& g) {
    NodeGroup ng;
    g.only_keys({"gpu_type", "gpus_per_node", "count", "name_prefix", "names", "addresses"});
    Node type = g.at("gpu_type");
    ng.gpu_type = type.as_string();
    if (c.type_index(ng.gpu_type) < 0) {
      if (declared_types) {
        type.fail("unknown GPU type \"" + ng.gpu_type + "\" (declared: " + c.type_names() + ")");
      }
      if (!valid_name(ng.gpu_type, kMaxClusterName))
        type.expected("a GPU type name of " + std::string(kNameRule));
      GpuType t;
      t.name = ng.gpu_type;
      c.types.push_back(t);
    }
    Node gpn = g.at("gpus_per_node");
    ng.gpus_per_node = gpn.positive_int32();
    if (ng.gpus_per_node > 1024) gpn.expected("at most 1024 GPUs per node");
    Node count = g.at("count");
    ng.count = count.positive_int32();
    if (ng.count > 100000) count.expected("at most 100000 nodes");
    ng.name_prefix = g.string_or("name_prefix", ng.gpu_type + "-");
    if (auto addrs = g.get("addresses")) {
      ng.addresses = addrs->as_strings();
      if (static_cast<int>(ng.addresses.size()) != ng.count) {
        addrs->fail("expected " + std::to_string(ng.count) + " addresses (count), got " +
                    std::to_string(ng.addresses.size()));
      }
    }
    if (auto names = g.get("names")) {
      ng.names = names->as_strings();
      if (static_cast<int>(ng.names.size()) != ng.count) {
        names->fail("expected " + std::to_string(ng.count) + " names (count), got " +
                    std::to_string(ng.names.size()));
      }
    }
    // All nodes of a type must have the same size.
    auto& t = c.types[c.type_index(ng.gpu_type)];
    if (t.gpus_per_node != 0 && t.gpus_per_node != ng.gpus_per_node) {
      gpn.fail("GPU type \"" + ng.gpu_type + "\" already has nodes of " +
               std::to_string(t.gpus_per_node) + " GPUs; declare nodes of another size as " +
               "another GPU type");
    }
    t.gpus_per_node = ng.gpus_per_node;
    c.groups.push_back(ng);
  });
  c.finalize(data.file(), data.status());
  return c;
}

void Cluster::finalize(const std::string& file, ExitStatus status) {
  for (auto& t : types) t.node_count = 0;
  nodes.clear();
  std::set<std::string> seen;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    int ti = type_index(g.gpu_type);
    if (ti < 0) {
      throw Error(status, located(file, "node_groups[" + std::to_string(gi) + "].gpu_type",
                                  "unknown GPU type \"" + g.gpu_type + "\""));
    }
    for (int k = 0; k < g.count; ++k) {
      ClusterNode n;
      n.name = g.names.empty() ? g.name_prefix + std::to_string(types[ti].node_count) : g.names[k];
      n.address = g.addresses.empty() ? n.name : g.addresses[k];
      const std::string where = "node_groups[" + std::to_string(gi) + "]";
      if (!valid_node_name(n.name)) {
        throw Error(status,
                    located(file, where + (g.names.empty() ? ".name_prefix" : ".names"),
                            "\"" + n.name + "\" cannot name a node (" + std::string(kNameRule) +
                                ", at most " + std::to_string(kMaxNodeName) + " characters)"));
      }
      if (!valid_node_address(n.address)) {
        throw Error(status, located(file, where + ".addresses",
                                    "\"" + n.address + "\" is not a node address (" +
                                        std::string(kAddressRule) + ")"));
      }
      n.type = ti;
      n.gpus = g.gpus_per_node;
      n.index_in_type = types[ti].node_count++;
      if (!seen.insert(n.name).second) {
        throw Error(status, located(file, "node_groups[" + std::to_string(gi) + "]",
                                    "duplicate node name \"" + n.name + "\""));
      }
      nodes.push_back(n);
    }
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i].node_count == 0) {
      throw Error(status, located(file, "gpu_types[" + std::to_string(i) + "]",
                                  "GPU type \"" + types[i].name + "\" has no nodes"));
    }
  }
}

Cluster cluster_from_document(const Document& doc) {
  Cluster c = parse_cluster(doc.data());
  if (c.name.empty()) c.name = doc.metadata().string_or("name", "");
  return c;
}

Cluster read_cluster(const std::string& file) {
  Document doc = read_document(file, {"Cluster"}, ExitStatus::config);
  Cluster c = cluster_from_document(doc);
  if (c.name.empty()) {
    std::string base = file;
    if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    if (auto dot = base.rfind('.'); dot != std::string::npos) base = base.substr(0, dot);
    c.name = base == "-" ? "cluster" : base;
  }
  return c;
}

nlohmann::json cluster_to_json(const Cluster& cluster) {
  using nlohmann::json;
  json out;
  out["name"] = cluster.name;
  if (!cluster.description.empty()) out["description"] = cluster.description;
  json types = json::array();
  for (const auto& t : cluster.types) {
    json j{{"name", t.name},
           {"gpus_per_node", t.gpus_per_node},
           {"nodes", t.node_count},
           {"gpus", t.capacity()}};
    if (t.memory_gb > 0) j["memory_gb"] = t.memory_gb;
    if (!t.description.empty()) j["description"] = t.description;
    types.push_back(j);
  }
  out["gpu_types"] = types;
  json groups = json::array();
  for (const auto& g : cluster.groups) {
    json j{{"gpu_type", g.gpu_type},
           {"gpus_per_node", g.gpus_per_node},
           {"count", g.count},
           {"name_prefix", g.name_prefix}};
    if (!g.names.empty()) j["names"] = g.names;
    if (!g.addresses.empty()) j["addresses"] = g.addresses;
    groups.push_back(j);
  }
  out["node_groups"] = groups;
  return out;
}

}  // namespace sia
