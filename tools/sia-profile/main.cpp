// sia-profile: build profiles -- import the published measurements into the model
// catalog, print a catalog model's bootstrap profile, or measure a job's profile live.
#include <cstdlib>

#include "app/profile.hpp"
#include "common/cli_app.hpp"
#include "common/shared_flags.hpp"

int main(int argc, char** argv) {
  const char* program = "sia-profile";
  CLI::App app{
      "Build throughput profiles for sia-estimate.\n\n"
      "Examples:\n"
      "  sia-profile import path/to/sia-artifact --out data/models\n"
      "  sia-profile seed cifar10 --job my-job > profile.json\n"
      "  sia-profile run job.toml --cluster cluster.toml --cpu > profile.json",
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

  sia::app::LiveArgs live;
  auto* run_cmd = app.add_subcommand(
      "run", "Measure a job's profile by running its worker at doubling local batch sizes");
  run_cmd->add_option("job", live.job_file,
                      "job.toml or JobSpec document (default: the reference sia-worker)");
  sia::cli::add_cluster_flag(*run_cmd, live.cluster, "Cluster whose GPU types to profile for");
  run_cmd
      ->add_option("--gpu-type", live.gpu_types,
                   "Profile for this GPU type (repeatable; default: every type of the "
                   "cluster the job allows)")
      ->allow_extra_args(false);
  run_cmd->add_flag("--cpu", live.cpu,
                    "Run on a CPU slot instead of a GPU; the points stand for every type");
  run_cmd->add_option("--device", live.device, "CUDA device index to run on")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  run_cmd->add_option("--start-bsz", live.start_bsz, "First local batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd
      ->add_option("--max-bsz", live.max_bsz,
                   "Largest local batch size (default: the job's max_batch_size, else 4096)")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--steps", live.steps, "Measured optimizer steps per batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd
      ->add_option("--memory-limit", live.memory_limit_mb,
                   "With --cpu: the worker's memory budget in MiB (SIA_MEMORY_LIMIT_MB)")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--timeout", live.timeout, "Seconds allowed per run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_cmd->add_option("--job", live.job, "Job name (default: the job spec's name)");
  run_cmd->add_option("--work-dir", live.work_dir,
                      "Keep each run's log and reports here (default: a temporary directory)");
  run_cmd->add_option("--merge", live.merge,
                      "Add the new points to this Profile (replacing those of the same types)");

  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  return sia::cli::run(program, [&] {
    if (import_cmd->parsed()) {
      if (imp.check && imp.out_dir.empty()) {
        throw sia::Error(sia::ExitStatus::usage, "--check needs --out");
      }
      return sia::app::run_import(imp);
    }
    if (seed_cmd->parsed()) return sia::app::run_seed(seed);
    if (run_cmd->parsed()) return sia::app::run_live(live);
    throw sia::Error(sia::ExitStatus::usage,
                     "expected a subcommand: import, seed or run (see sia-profile --help)");
  });
}
