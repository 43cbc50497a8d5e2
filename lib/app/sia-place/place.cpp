#include "app/sia-place/place.hpp"

#include <chrono>

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "core/compat.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/placement.hpp"
#include "os/clock.hpp"
#include "place/placer.hpp"

namespace sia::app {

using nlohmann::json;

static std::string place_table(const Placement& p, const Cluster& c, bool explain) {
  std::vector<std::string> head = {"job", "type", "nodes", "restart"};
  if (explain) head.push_back("note");
  cli::Table t(head);
  auto note = [&](const std::string& job) {
    auto it = p.notes.find(job);
    return it == p.notes.end() ? std::string() : it->second;
  };
  for (const auto& j : p.jobs) {
    std::string nodes;
    for (const auto& ng : j.nodes) {
      if (!nodes.empty()) nodes += " ";
      nodes += ng.node + ":";
      for (std::size_t k = 0; k < ng.gpus.size(); ++k) {
        nodes += (k ? "," : "") + std::to_string(ng.gpus[k]);
      }
    }
    std::vector<std::string> row = {j.job, c.types[j.type].name, nodes, j.restart ? "yes" : "no"};
    if (explain) row.push_back(note(j.job));
    t.add(row);
  }
  for (const auto& w : p.waiting) {
    std::vector<std::string> row = {w, "-", "not placed", ""};
    if (explain) row.push_back(note(w));
    t.add(row);
  }
  std::string out = t.render();
  if (!p.evicted.empty()) {
    out += "evicted:";
    for (const auto& e : p.evicted) out += " " + e;
    out += "\n";
  }
  return out;
}

int run_place(const PlaceArgs& args) {
  Document doc = read_document(args.input, {"Allocation"});
  Allocation a = parse_allocation(doc.data());
  Cluster cluster = args.cluster.empty() ? a.cluster : read_cluster(args.cluster);
  // Every allocated type must exist in the cluster we place on.
  for (const auto& j : a.jobs) {
    if (j.config && cluster.type_index(a.cluster.types[j.config->type].name) < 0) {
      throw Error(ExitStatus::data, display_name(args.input) + ": job \"" + j.job +
                                        "\": GPU type \"" + a.cluster.types[j.config->type].name +
                                        "\" is not in cluster " + cluster.name + " (" +
                                        cluster.type_names() + ")");
    }
  }
  std::optional<Placement> previous;
  if (!args.previous.empty()) {
    Document pd = read_document(args.previous, {"Placement"});
    previous = parse_placement(pd.data(), cluster);
    if (previous->cluster_name != cluster.name) {
      throw Error(ExitStatus::data,
                  display_name(args.previous) + ": cluster_name: a placement on \"" +
                      previous->cluster_name + "\", not on \"" + cluster.name + "\"");
    }
  }
  const Placement p = place(a, cluster, previous, placer_quirks(parse_compat(args.compat)),
                            a.order.empty() ? nullptr : &a.order);
  if (args.format == cli::Format::table) {
    cli::write_stdout(place_table(p, cluster, args.explain));
  } else {
    cli::print_document("Placement", json{{"generator", "sia-place"}},
                        placement_to_json(p, cluster, args.explain));
  }
  return 0;
}

}  // namespace sia::app
