#include "app/profile.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "model/artifact_import.hpp"

namespace sia::app {

namespace fs = std::filesystem;
using nlohmann::json;

int run_import(const ImportArgs& args) {
  std::vector<ModelInfo> models = import_artifact(args.artifact_dir);
  if (args.out_dir.empty()) {
    for (const auto& m : models) {
      cli::write_stdout(dump_document("Model", json::object(), model_to_json(m), false) + "\n");
    }
    return 0;
  }
  std::error_code ec;
  if (!args.check) {
    fs::create_directories(args.out_dir, ec);
    if (ec) throw Error(ExitStatus::cant_create, args.out_dir + ": " + ec.message());
  }
  int differ = 0;
  for (const auto& m : models) {
    std::string text = dump_document("Model", json::object(), model_to_json(m), true) + "\n";
    std::string path = (fs::path(args.out_dir) / (m.name + ".json")).string();
    if (args.check) {
      std::string have;
      try {
        have = read_input(path);
      } catch (const Error&) {
        have.clear();
      }
      if (have != text) {
        cli::write_stderr("sia-profile: " + path + " is out of date\n");
        ++differ;
      }
      continue;
    }
    write_file_atomic(path, text);
    cli::info("sia-profile", "wrote " + path);
  }
  return differ ? to_int(ExitStatus::negative) : 0;
}

int run_seed(const SeedArgs& args) {
  Catalog catalog(args.catalog.empty() ? default_catalog_dir() : args.catalog);
  const ModelInfo& m = catalog.get(args.model);
  for (const auto& g : m.gpus) {
    if (g.pipeline_stages > 1) {
      throw Error(ExitStatus::data,
                  args.model + ": a pipeline-parallel model: its catalog rows are per-stage "
                               "micro-batch times, not single-GPU profiles");
    }
  }
  Profile p = m.seed_profile();
  p.job = args.job;
  cli::print_document("Profile", json::object(), profile_to_json(p));
  return 0;
}

}  // namespace sia::app
