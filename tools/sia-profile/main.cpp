// sia-profile: build profiles -- import the published measurements into the model
// catalog, print a catalog model's bootstrap profile, or measure a job's profile live.
#include <cstdlib>

#include "app/sia-profile/profile.hpp"
#include "common/shared_flags.hpp"
#include "common/subcommands.hpp"

namespace {

struct Flags {
  sia::app::ImportArgs imp;
  sia::app::SeedArgs seed;
  sia::app::LiveArgs live;
};

void add_import_flags(CLI::App& cmd, Flags& f) {
  cmd.add_option("artifact", f.imp.artifact_dir, "Artifact root or its traces/ folder")->required();
  cmd.add_option("--out", f.imp.out_dir,
                 "Write <model>.json files here (default: JSON Lines on stdout)");
  cmd.add_flag("--check", f.imp.check,
               "Compare with the files in --out instead of writing (exit 1 if stale)");
}

int run_import(Flags& f) {
  if (f.imp.check && f.imp.out_dir.empty()) {
    throw sia::Error(sia::ExitStatus::usage, "--check needs --out");
  }
  return sia::app::run_import(f.imp);
}

void add_seed_flags(CLI::App& cmd, Flags& f) {
  if (const char* c = std::getenv("SIA_CATALOG")) f.seed.catalog = c;
  cmd.add_option("model", f.seed.model, "Catalog model name")->required();
  cmd.add_option("--catalog", f.seed.catalog, "Model catalog directory");
  cmd.add_option("--job", f.seed.job, "Job name to record in the profile");
}

void add_run_flags(CLI::App& cmd, Flags& f) {
  auto& live = f.live;
  cmd.add_option("job", live.job_file,
                 "job.toml or JobSpec document (default: the reference sia-worker)");
  sia::cli::add_cluster_flag(cmd, live.cluster, "Cluster whose GPU types to profile for");
  cmd.add_option("--gpu-type", live.gpu_types,
                 "Profile for this GPU type (repeatable; default: every type of the "
                 "cluster the job allows)")
      ->allow_extra_args(false);
  cmd.add_flag("--cpu", live.cpu,
               "Run on a CPU slot instead of a GPU; the points stand for every type");
  cmd.add_option("--device", live.device, "CUDA device index to run on")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--start-bsz", live.start_bsz, "First local batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--max-bsz", live.max_bsz,
                 "Largest local batch size (default: the job's max_batch_size, else 4096)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--steps", live.steps, "Measured optimizer steps per batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--memory-limit", live.memory_limit_mb,
                 "With --cpu: the worker's memory budget in MiB (SIA_MEMORY_LIMIT_MB)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--timeout", live.timeout, "Seconds allowed per run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--job", live.job, "Job name (default: the job spec's name)");
  cmd.add_option("--work-dir", live.work_dir,
                 "Keep each run's log and reports here (default: a temporary directory)");
  cmd.add_option("--merge", live.merge,
                 "Add the new points to this Profile (replacing those of the same types)");
}

const sia::cli::Subcommand<Flags> kSubcommands[] = {
    {"import", "Convert the Sia artifact's traces into Model documents (the catalog)",
     add_import_flags, run_import},
    {"seed", "Print a catalog model's single-GPU profile", add_seed_flags,
     [](Flags& f) { return sia::app::run_seed(f.seed); }},
    {"run", "Measure a job's profile by running its worker at doubling local batch sizes",
     add_run_flags, [](Flags& f) { return sia::app::run_live(f.live); }},
};

}  // namespace

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
  Flags flags;
  return sia::cli::run_subcommands(app, argc, argv, common, program, kSubcommands, flags);
}
