// The model catalog: what the project knows about each model it ships -- measured step
// and sync times per GPU type, placement and local batch size, measured gradient
// statistics per epoch and batch size, batch limits, checkpoint-restore costs and the
// simulator's calibration. One Model document per model under data/models/, converted from
// the published Sia artifact by `sia-profile import` (see artifact_import.hpp).
//
// Estimation uses only the catalog's batch limits, restart costs and the 1-GPU rows (the
// bootstrap profile a real deployment gathers with sia-profile); the simulator also uses
// the full tables as ground truth.
// Thread-safety: a loaded ModelInfo is immutable; Catalog::get is not thread-safe (it loads
// lazily) -- load what you need before sharing a Catalog between threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/document.hpp"
#include "core/profile.hpp"

namespace sia {

// Placement ids: the GPUs used on each node as decimal digits, smallest cyclic rotation
// ("13" = two nodes with 1 and 3 GPUs). Nodes of up to 9 GPUs.
std::string placement_id(const std::vector<int>& gpus_per_node);

struct PlacementRow {
  std::string placement;  // canonical id
  int nodes = 0;          // digit count
  int replicas = 0;       // digit sum
  int local_bsz = 0;
  double step_time = 0;
  double sync_time = 0;
};

struct ScalabilityRow {
  int nodes = 0;
  int replicas = 0;
  int local_bsz = 0;
  double step_time = 0;
  double sync_time = 0;
};

struct EpochRow {
  double progress = 0;   // cumulative progress (iterations at the initial batch size)
  double iteration = 0;  // cumulative optimizer steps at this batch size
  double metric = 0;     // validation metric after the epoch
  double grad_sqr = 0;
  double grad_var = 0;
};

struct ValidationTable {
  double batch_size = 0;  // global batch
  std::vector<EpochRow> epochs;
};

struct ModelGpu {
  std::string name;           // sia's GPU type name, e.g. "t4"
  std::string artifact_name;  // the published artifact's suffix, e.g. "aws"
  int gpus_per_node = 0;
  int max_profiled_nodes = 0;  // the largest node count measured on real hardware
  int pipeline_stages = 1;     // > 1 for hybrid-parallel models
  int min_local_bsz = 0;
  int max_local_bsz = 0;  // memory limit of one GPU
  std::vector<PlacementRow> placements;
  std::vector<ScalabilityRow> scalability;

  // Samples/s of one GPU at its memory limit (max local batch over max step time of the
  // single-GPU rows): the artifact's cross-type projection ratio.
  double single_gpu_throughput() const;
};

struct ModelInfo {
  std::string name;
  std::string description;
  std::string source;
  double init_batch_size = 0;  // B0, the smallest validated global batch
  double max_batch_size = 0;   // the largest validated global batch
  int max_epochs = 0;
  double restart_cost = 30;     // seconds of checkpoint-restore charged on every (re)start
  double restart_penalty = 30;  // the artifact scheduler's own S_j (its restart factor)
  double slowdown = 1;          // simulator calibration: progress rate is divided by it
  std::vector<ModelGpu> gpus;
  std::vector<ValidationTable> validation;  // ascending batch size

  const ModelGpu* gpu(const std::string& type) const;
  // Progress needed to finish: min over batch sizes of progress after max_epochs epochs.
  double target_progress() const;
  // Progress at the end of `epochs` epochs (0 for 0): min over batch sizes.
  double progress_at_epoch(int epochs) const;
  // The bootstrap profile: every single-GPU row of every GPU type.
  Profile seed_profile() const;
};

ModelInfo parse_model(const Node& data);
nlohmann::json model_to_json(const ModelInfo& m);

class Catalog {
 public:
  Catalog() = default;
  // Indexes `dir`/*.json (files named <model>.json); loads each model on first use.
  explicit Catalog(std::string dir);

  const std::string& dir() const { return dir_; }
  bool has(const std::string& model) const;
  std::vector<std::string> names() const;
  // Throws Error(data) naming `context` (e.g. "jobs.json: jobs[2].model") if unknown.
  const ModelInfo& get(const std::string& model, const std::string& context = "") const;
  // The model if it is already loaded, else null (no I/O, no error): the fast path of
  // callers whose error context costs something to build.
  const ModelInfo* loaded(const std::string& model) const;
  void add(ModelInfo info);  // in-memory models (tests, profiles)

 private:
  std::string dir_;
  std::map<std::string, std::string> files_;
  mutable std::map<std::string, std::shared_ptr<const ModelInfo>> loaded_;
};

// The directory holding the bundled data (catalog, clusters, workloads): $SIA_DATA_DIR, else
// <exe>/../share/sia, else the source tree's data/ (for a build tree).
std::string default_data_dir();
std::string default_catalog_dir();

}  // namespace sia
