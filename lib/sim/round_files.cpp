#include "sim/round_files.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "model/shared_profiles.hpp"
#include "os/atomic_file.hpp"
#include "round/round_documents.hpp"

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
                        cluster_document({}, cluster), os::kPublicFile);
}

void RoundFiles::save(int round, double t, const std::vector<JobState*>& views,
                      const Estimator& est, const GoodputMatrix& m, const Allocation& alloc,
                      const Placement& placement) const {
  const nlohmann::json meta{{"generator", "sia-ctl simulate"},
                            {"round", round},
                            {"t", t},
                            {"profile", profile_},
                            {"policy", policy_}};
  const RoundDocuments docs = {{"jobs", jobs_document(meta, {views.begin(), views.end()})},
                               {"profiles", shared_profiles_document(est.shared_profiles(), meta)},
                               {"goodput", goodput_matrix_document(m, meta, true) + "\n"},
                               {"allocation", allocation_document(meta, alloc)},
                               {"placement", placement_document(meta, placement, cluster_)}};
  save_round_documents(dir_, round, docs, os::kPublicFile);
}

}  // namespace sia
