// sia-estimate as a library call: read the cluster and the jobs, estimate, print the
// GoodputMatrix (or a table for people), optionally save the jobs with refreshed fits.
#pragma once

#include <string>
#include <vector>

#include "cli/tool.hpp"
#include "model/estimator.hpp"

namespace sia::app {

struct EstimateArgs {
  std::vector<std::string> inputs;  // job files ("-" = stdin)
  std::string cluster;              // cluster.toml or a Cluster document
  std::string catalog;              // model catalog directory ("" = bundled)
  std::string compat = "default";   // "default" | "reference"
  int scale_up = 2;
  bool no_projection = false;
  bool no_seed_profiles = false;
  std::string save_jobs;  // write the jobs (with their fitted models) to this file
  // The profile store (model/shared_profiles.hpp): its mode, the file to start from ("":
  // empty) and the file to write it to, with these jobs' measurements added ("": none).
  std::string profile_store = profile_store_name(kDefaultProfileStore);
  std::string profiles;
  std::string save_profiles;
  cli::Format format = cli::Format::json;
};

int run_estimate(const EstimateArgs& args);

}  // namespace sia::app
