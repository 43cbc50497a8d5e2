// sia-profile: build profiles -- import the published measurements into the model
// catalog, or print a catalog model's bootstrap profile.
#include <cstdlib>

#include "app/profile.hpp"
#include "common/cli_app.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-profile";
  CLI::App app{
      "Build throughput profiles for sia-estimate.\n\n"
      "Examples:\n"
      "  sia-profile import ../shared/data/sia-artifact --out data/models\n"
      "  sia-profile seed cifar10 --job my-job > profile.json",
      program};
  sia::cli::CommonFlags common;
  sia::cli::add_common_flags(app, common, {"json"});
  app.require_subcommand(0, 1);
  app.fallthrough();  // -o, -q, -v also after the subcommand

  sia::app::ImportArgs imp;
  auto* import_cmd = app.add_subcommand(
      "import", "Convert the Sia artifact's traces into Model documents (the catalog)");
  import_cmd->add_option("artifact", imp.artifact_dir, "Artifact root or its traces/ folder")
      ->required();
  import_cmd->add_option("--out", imp.out_dir,
                         "Write <model>.json files here (default: JSON Lines on stdout)");
  import_cmd->add_flag("--check", imp.check,
                       "Compare with the files in --out instead of writing (exit 1 if stale)");

  sia::app::SeedArgs seed;
  if (const char* c = std::getenv("SIA_CATALOG")) seed.catalog = c;
  auto* seed_cmd = app.add_subcommand("seed", "Print a catalog model's single-GPU profile");
  seed_cmd->add_option("model", seed.model, "Catalog model name")->required();
  seed_cmd->add_option("--catalog", seed.catalog, "Model catalog directory");
  seed_cmd->add_option("--job", seed.job, "Job name to record in the profile");

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  return sia::cli::run(program, [&] {
    if (import_cmd->parsed()) {
      if (imp.check && imp.out_dir.empty()) {
        throw sia::Error(sia::ExitStatus::usage, "--check needs --out");
      }
      return sia::app::run_import(imp);
    }
    if (seed_cmd->parsed()) return sia::app::run_seed(seed);
    throw sia::Error(sia::ExitStatus::usage, "expected a subcommand: import or seed (see sia-profile --help)");
  });
}
