#include "sim/round_files.hpp"

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "model/shared_profiles.hpp"
#include "os/atomic_file.hpp"

namespace sia {

RoundFiles::RoundFiles(std::string dir, const Cluster& cluster, std::string profile,
                       std::string policy)
    : dir_(std::move(dir)),
      cluster_(cluster),
      profile_(std::move(profile)),
      policy_(std::move(policy)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw Error(ExitStatus::cant_create, dir_ + ": " + ec.message());
  os::write_file_atomic((std::filesystem::path(dir_) / "cluster.json").string(),
                        dump_document("Cluster", {}, cluster_to_json(cluster), true) + "\n",
                        os::kPublicFile);
}

void RoundFiles::save(int round, double t, const std::vector<JobState*>& views,
                      const Estimator& est, const GoodputMatrix& m, const Allocation& alloc,
                      const Placement& placement) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%06d", round);
  const std::string pre = (std::filesystem::path(dir_) / buf).string();
  nlohmann::json list = nlohmann::json::array();
  for (const JobState* v : views) list.push_back(job_state_to_json(*v));
  const nlohmann::json meta{{"generator", "sia-ctl simulate"},
                            {"round", round},
                            {"t", t},
                            {"profile", profile_},
                            {"policy", policy_}};
  auto write = [&](const std::string& suffix, const std::string& text) {
    os::write_file_atomic(pre + suffix, text, os::kPublicFile);
  };
  write("-jobs.json", dump_document("Jobs", meta, nlohmann::json{{"jobs", list}}, true) + "\n");
  write("-profiles.json", shared_profiles_document(est.shared_profiles(), meta));
  write("-goodput.json", goodput_matrix_document(m, meta, true) + "\n");
  write("-allocation.json",
        dump_document("Allocation", meta, allocation_to_json(alloc), true) + "\n");
  write("-placement.json",
        dump_document("Placement", meta, placement_to_json(placement, cluster_), true) + "\n");
}

}  // namespace sia
