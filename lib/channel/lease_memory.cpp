#include "channel/lease_memory.hpp"

#include <cstdint>
#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/names.hpp"
#include "os/atomic_file.hpp"
#include "os/safe_open.hpp"

namespace sia::channel {

using nlohmann::json;

namespace {

// A cluster's leases fit in far less; a larger file is not one this controller wrote.
constexpr std::int64_t kMaxBytes = 1 << 20;

}  // namespace

std::string leases_document(const std::map<std::string, Lease>& leases) {
  json nodes = json::object();
  for (const auto& [node, l] : leases) {
    nodes[node] = {{"fence_after", l.fence_after}, {"grace", l.grace}};
  }
  return dump_document(kLeasesKind, {{"generator", "sia-ctl serve"}}, {{"nodes", nodes}}, false) +
         "\n";
}

std::map<std::string, Lease> parse_leases(const std::string& text, const std::string& file) {
  Document doc = parse_document(text, file, {kLeasesKind});
  Node nodes = doc.data().at("nodes");
  if (!nodes.is_object()) nodes.expected("an object of leases by node");
  std::map<std::string, Lease> out;
  for (const auto& node : nodes.keys()) {
    if (!valid_node_name(node)) {
      throw Error(ExitStatus::data,
                  located(file, nodes.path(),
                          "\"" + node + "\" cannot name a node (" + std::string(kNameRule) + ")"));
    }
    Node l = nodes.at(node);
    if (!l.is_object()) l.expected("an object {fence_after, grace}");
    out[node] = Lease{l.at("fence_after").positive_number(), l.at("grace").non_negative_number()};
  }
  return out;
}

std::map<std::string, Lease> read_leases(const std::string& path) {
  os::Fd fd = os::open_file(path, os::Access::read);
  if (!fd) return {};  // none yet
  if (os::file_size(fd.get(), path) > kMaxBytes) {
    throw Error(ExitStatus::data, path + ": larger than " + std::to_string(kMaxBytes) +
                                      " bytes, expected a NodeLeases document");
  }
  return parse_leases(os::read_at(fd.get(), 0, kMaxBytes), path);
}

LeaseMemory::LeaseMemory(std::string path, std::function<void(const std::string&)> warn)
    : path_(std::move(path)), warn_(std::move(warn)) {
  try {
    leases_ = read_leases(path_);
  } catch (const std::exception& e) {  // Error, with the file and field; anything else too
    leases_.clear();
    warn_(e.what() + std::string("; every node not heard since the start gets the assumed lease"));
  }
}

void LeaseMemory::remember(const std::string& node, const std::optional<Lease>& said) {
  auto it = leases_.find(node);
  if (said) {
    if (it != leases_.end() && it->second.fence_after == said->fence_after &&
        it->second.grace == said->grace) {
      return;
    }
    leases_[node] = *said;
  } else {
    if (it == leases_.end()) return;
    leases_.erase(it);
  }
  write();
}

void LeaseMemory::write() {
  try {
    os::write_file_atomic(path_, leases_document(leases_));
  } catch (const Error& e) {
    warn_(std::string(e.what()) + "; a restarted controller may hold a silent node for a " +
          "lease older than its agent's");
  }
}

}  // namespace sia::channel
