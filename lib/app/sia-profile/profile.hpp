// sia-profile as library calls. `import` converts the published Sia artifact into the
// model catalog (one Model document per model); `seed` prints a model's bootstrap Profile;
// `run` measures a job's Profile live by running its worker (worker/live_profile.hpp).
#pragma once

#include <string>
#include <vector>

#include "cli/tool.hpp"

namespace sia::app {

struct ImportArgs {
  std::string artifact_dir;
  std::string out_dir;  // "" = print the documents as JSON Lines on stdout
  bool check = false;   // compare with out_dir instead of writing; exit 1 if different
};

int run_import(const ImportArgs& args);

struct SeedArgs {
  std::string model;
  std::string catalog;
  std::string job;
};

int run_seed(const SeedArgs& args);

struct LiveArgs {
  std::string job_file;                // job.toml or JobSpec document ("" = sia-worker)
  std::string cluster;                 // the GPU types to profile for
  std::vector<std::string> gpu_types;  // a subset of the cluster's (or, without one, any)
  bool cpu = false;
  int device = 0;
  int start_bsz = 8;
  int max_bsz = 0;  // 0: the job's max_batch_size, else 4096
  int steps = 20;
  double memory_limit_mb = 0;
  double timeout = 600;
  std::string job;       // job name (default: the spec's, else "sia-worker")
  std::string work_dir;  // keep the runs' logs and reports here (default: a temporary one)
  std::string merge;     // a Profile to add the points to
};

int run_live(const LiveArgs& args);

}  // namespace sia::app
