#include "round/round_documents.hpp"

#include <cstdio>

#include "core/document.hpp"
#include "os/atomic_file.hpp"

namespace sia {

std::string round_document_name(std::int64_t round, const std::string& suffix) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%06lld-", static_cast<long long>(round));
  return std::string(buf) + suffix + ".json";
}

std::string cluster_document(const nlohmann::json& meta, const Cluster& cluster) {
  return dump_document("Cluster", meta, cluster_to_json(cluster), true) + "\n";
}

std::string jobs_document(const nlohmann::json& meta, const std::vector<const JobState*>& jobs) {
  nlohmann::json list = nlohmann::json::array();
  for (const JobState* j : jobs) {
    list.push_back(job_state_to_json(*j));
    list.back().erase("command");
  }
  return dump_document("Jobs", meta, nlohmann::json{{"jobs", list}}, true) + "\n";
}

std::string allocation_document(const nlohmann::json& meta, const Allocation& allocation) {
  return dump_document("Allocation", meta, allocation_to_json(allocation), true) + "\n";
}

std::string placement_document(const nlohmann::json& meta, const Placement& placement,
                               const Cluster& cluster, bool notes) {
  return dump_document("Placement", meta, placement_to_json(placement, cluster, notes), true) +
         "\n";
}

void save_round_documents(const std::string& dir, std::int64_t round, const RoundDocuments& docs,
                          int mode) {
  for (const auto& [suffix, text] : docs) {
    os::write_file_atomic(dir + "/" + round_document_name(round, suffix), text, mode);
  }
}

}  // namespace sia
