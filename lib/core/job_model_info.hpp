// What a GoodputMatrix row carries for policies that do not rank the goodput entries
// directly (the baselines): the job's fitted throughput model per GPU type and one over
// all types together (heterogeneity-unaware policies), its gradient statistics and batch
// limits -- enough to evaluate goodput at any (nodes, replicas) -- and how far the job is
// (statistical progress, in iterations at the initial batch size, done and in total).
// Thread-safety: plain values.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/node.hpp"
#include "core/profile.hpp"

namespace sia {

class JsonWriter;

struct TypeModelInfo {
  bool known = false;  // a model was fitted to measurements on this type
  std::array<double, 7>
      params{};  // PerfParams (alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma)
  int min_local = 1;
  int max_local = 1;
  int stages = 1;
  int max_replicas = 1;  // the scale-up cap on this type
};

struct JobModelInfo {
  std::vector<TypeModelInfo> types;  // the cluster's GPU types, in order
  bool blind_known = false;          // one model fitted to every type's measurements
  std::array<double, 7> blind_params{};
  int blind_min_local = 1;
  int blind_max_local = 1;
  std::optional<GradientStats> gradient;
  double init_batch_size = 0;
  double max_batch_size = 0;
  int max_observed_replicas = 0;  // any type
};

struct JobProgress {
  double done = 0;   // statistical progress so far
  double total = 0;  // needed to finish
};

JobModelInfo parse_job_model_info(const Node& n, const std::vector<std::string>& types);
// Writes the model section of a GoodputMatrix row (the one writer; see goodput_matrix.hpp).
void write_job_model_info(JsonWriter& w, const JobModelInfo& m,
                          const std::vector<std::string>& types);

}  // namespace sia
