// Converts the measurements published with the Sia paper (the siasosp23/artifacts
// repository, sia-simulator/traces: placements-*.csv, scalability-*.csv, validation-*.csv
// per model and GPU type) into sia's own model catalog. Constants that the artifact keeps
// in code rather than in files -- epochs per model, checkpoint-restore delays, the
// scheduler's restart penalties, the simulator's calibration, GPUs per node, the largest
// profiled node counts, batch-limit overrides, pipeline stages -- are taken from
// the published artifact of the Sia paper (Subramanya et al., SOSP '23) and recorded in
// each model's `source`.
//
// GPU types are renamed by hardware: aws -> t4, azure -> v100, dgx-ext -> a100,
// dgx -> a100-capped (same A100s profiled only up to T4 batch sizes), quad -> rtx6000,
// rtx -> rtx2080ti. The unsuffixed placements.csv / scalability.csv are copies of the aws
// files and are skipped.
// Thread-safety: pure functions over the file system.
#pragma once

#include <string>
#include <vector>

#include "model/catalog.hpp"

namespace sia {

struct ArtifactGpuType {
  const char* artifact;  // file suffix in the artifact
  const char* name;      // sia's name
  int gpus_per_node;
  int max_profiled_nodes;
  const char* description;
};

// The six GPU types in the artifact, in sia's canonical order.
const std::vector<ArtifactGpuType>& artifact_gpu_types();
// "aws" -> "t4"; unknown names are returned unchanged.
std::string sia_gpu_name(const std::string& artifact_name);

// `dir` is the artifact root (holding traces/) or its traces/ folder. Reads every model
// folder found; throws Error(no_input) if there is none, Error(data) with file:line on a
// malformed file.
std::vector<ModelInfo> import_artifact(const std::string& dir);
ModelInfo import_artifact_model(const std::string& traces_dir, const std::string& model);

}  // namespace sia
