// sia-solve: GoodputMatrix -> Allocation.
#include <unistd.h>

#include "app/sia-solve/solve.hpp"
#include "cli/heap_hint.hpp"
#include "common/cli_app.hpp"
#include "common/knob_flags.hpp"
#include "common/shared_flags.hpp"
#include "core/document.hpp"

int main(int argc, char** argv) {
  sia::cli::prefer_huge_page_heap();  // multi-megabyte JSON in, out, exit
  sia::keep_documents_until_exit();
  const char* program = "sia-solve";
  CLI::App app{
      "Choose a configuration (nodes, GPUs, GPU type) for every job: the Sia ILP.\n\n"
      "Reads a GoodputMatrix (sia-estimate) and writes an Allocation for sia-place.\n\n"
      "Examples:\n"
      "  sia-estimate --cluster c.toml jobs.json | sia-solve | sia-place\n"
      "  sia-solve --explain -o table goodput.json\n"
      "  sia-solve --p 1 --lambda-n -1.1 --previous last-allocation.json goodput.json",
      program};
  sia::cli::CommonFlags common;
  sia::app::SolveArgs a;
  app.add_option("matrix", a.input, "GoodputMatrix file, or - for stdin (default: stdin)");
  app.add_option("--policy", a.policy, "Scheduling policy (" + sia::policy_list() + ")")
      ->capture_default_str();
  const auto knobs = sia::cli::add_knob_flags(app, a.options, sia::kSolveFlag);
  app.add_flag(
      "--no-glpk", [&](std::int64_t) { a.options.use_glpk = false; },
      "Without GLPK: skip its LP rounding and branch and cut");
  app.add_option("--round", a.options.round,
                 "Round length in seconds, for time-sharing policies (default: the policy's)");
  app.add_option("--previous", a.previous, "The previous round's Allocation");
  sia::cli::add_compat_flag(app, a.compat);
  app.add_flag("--explain", a.options.explain, "Say why each job got its configuration or waits");
  sia::cli::add_common_flags(app, common);
  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  a.format = common.format();
  a.knob_flags = sia::cli::given_knobs(knobs);
  return sia::cli::run(program, [&] {
    if (a.input == "-" && isatty(0)) {
      throw sia::Error(sia::ExitStatus::usage, "no goodput matrix given and stdin is a terminal");
    }
    return sia::app::run_solve(a);
  });
}
