#include "ctl/book_reservations.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/node.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

// The names of the nodes of the last round's cluster (none when it does not read).
std::set<std::string> node_names(const json& cluster) {
  std::set<std::string> out;
  if (!cluster.is_object()) return out;
  try {
    for (const auto& n : parse_cluster(Node(cluster, "last round", "cluster")).nodes)
      out.insert(n.name);
  } catch (const Error&) {
    out.clear();
  }
  return out;
}

}  // namespace

ReservedChoice reserve_from_book(const std::vector<Reservation>& reservations,
                                 const Cluster& cluster, double now, const json& last_cluster,
                                 const json& last_placement, const std::set<std::string>& active) {
  std::set<std::string> before;
  const std::set<std::string> last = node_names(last_cluster);
  if (!last.empty()) {
    for (const auto& n : cluster.nodes) {
      if (!last.count(n.name)) before.insert(n.name);
    }
  }
  std::vector<NodeUse> uses;
  if (last_placement.is_object() && last_placement.contains("jobs") &&
      last_placement["jobs"].is_array()) {
    for (const auto& j : last_placement["jobs"]) {
      if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
      const std::string job = j["name"].get<std::string>();
      if (!active.count(job) || !j.contains("nodes") || !j["nodes"].is_array()) continue;
      for (const auto& n : j["nodes"]) {
        if (!n.is_object() || !n.contains("name") || !n["name"].is_string()) continue;
        const int gpus =
            n.contains("gpus") && n["gpus"].is_array() ? static_cast<int>(n["gpus"].size()) : 0;
        uses.push_back({n["name"].get<std::string>(), job, gpus});
      }
    }
  }
  return choose_reserved(cluster, reserved_nodes(reservations, cluster, now).held, before, uses);
}

}  // namespace sia::ctl
