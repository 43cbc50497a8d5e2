// The documents a round is kept as, written by one writer for the simulator's
// `--save-rounds DIR` and the controller's STATE/rounds: per round, rNNNNNN-SUFFIX.json for
// each stage's input and output (SUFFIX: cluster, profiles, jobs, goodput, allocation,
// placement), each written atomically, so that a round can be replayed through the
// programs by hand (sia-estimate | sia-solve | sia-place). The jobs are saved without
// their commands: the scheduler does not read them, and a command reaches only the nodes
// that run its job.
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/allocation.hpp"
#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "model/job_state.hpp"

namespace sia {

// (suffix, document text) in the order written.
using RoundDocuments = std::vector<std::pair<std::string, std::string>>;

// "rNNNNNN-SUFFIX.json": the file a round's document is saved as.
std::string round_document_name(std::int64_t round, const std::string& suffix);

// The documents, with `meta` as their metadata.
std::string cluster_document(const nlohmann::json& meta, const Cluster& cluster);
std::string jobs_document(const nlohmann::json& meta, const std::vector<const JobState*>& jobs);
std::string allocation_document(const nlohmann::json& meta, const Allocation& allocation);
// `notes`: with the placer's notes (placement_to_json's).
std::string placement_document(const nlohmann::json& meta, const Placement& placement,
                               const Cluster& cluster, bool notes = false);

// Writes `docs` of round `round` into `dir` (which exists), each atomically with `mode`
// (os/atomic_file.hpp).
void save_round_documents(const std::string& dir, std::int64_t round, const RoundDocuments& docs,
                          int mode);

}  // namespace sia
