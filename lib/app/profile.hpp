// sia-profile as library calls. `import` converts the published Sia artifact into the
// model catalog (one Model document per model); `seed` prints a model's bootstrap Profile.
#pragma once

#include <string>

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

}  // namespace sia::app
