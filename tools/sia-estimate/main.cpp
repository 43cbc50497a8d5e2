// sia-estimate: jobs (specs, profiles, reports) + cluster -> GoodputMatrix.
#include <unistd.h>

#include <cstdlib>

#include "app/sia-estimate/estimate.hpp"
#include "cli/heap_hint.hpp"
#include "common/cli_app.hpp"
#include "common/shared_flags.hpp"
#include "core/document.hpp"

int main(int argc, char** argv) {
  sia::cli::prefer_huge_page_heap();  // multi-megabyte JSON in, out, exit
  sia::keep_documents_until_exit();
  const char* program = "sia-estimate";
  CLI::App app{
      "Estimate every job's goodput on every valid configuration of the cluster.\n\n"
      "Reads jobs (Jobs or JobSpec documents, JSON Lines of them, or job TOML files) and\n"
      "writes a GoodputMatrix for sia-solve.\n\n"
      "Examples:\n"
      "  sia-estimate --cluster cluster.toml jobs.json | sia-solve | sia-place --cluster "
      "cluster.toml\n"
      "  sia-estimate --cluster cluster.toml job.toml -o table",
      program};
  sia::cli::CommonFlags common;
  sia::app::EstimateArgs a;
  if (const char* c = std::getenv("SIA_CATALOG")) a.catalog = c;
  app.add_option("jobs", a.inputs, "Job files, or - for stdin (default: stdin)");
  sia::cli::add_cluster_flag(app, a.cluster, "Cluster description, TOML or a Cluster document");
  app.add_option("--catalog", a.catalog,
                 "Model catalog directory (default $SIA_CATALOG, else the bundled one)");
  sia::cli::add_compat_flag(app, a.compat);
  app.add_option("--scale-up", a.scale_up,
                 "Scale-up limit: at most this many times the largest replica count observed")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_flag("--no-projection", a.no_projection, "Do not estimate unvisited GPU types");
  app.add_flag("--no-seed-profiles", a.no_seed_profiles,
               "Ignore the catalog's single-GPU bootstrap profiles");
  app.add_option("--save-jobs", a.save_jobs, "Also write the jobs with their fitted models here");
  sia::cli::add_profile_store_flag(app, a.profile_store);
  app.add_option("--profiles", a.profiles,
                 "The profile store to start from: Profile documents of catalog models, as "
                 "--save-profiles, the simulator's saved rounds and the controller write them");
  app.add_option("--save-profiles", a.save_profiles,
                 "Also write the profile store, with these jobs' measurements added, here");
  sia::cli::add_common_flags(app, common);
  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  a.format = common.format();
  return sia::cli::run(program, [&] {
    if (a.inputs.empty()) {
      if (isatty(0)) {
        throw sia::Error(sia::ExitStatus::usage, "no job files given and stdin is a terminal");
      }
      a.inputs.push_back("-");
    }
    return sia::app::run_estimate(a);
  });
}
