// sia-place: Allocation (+ Cluster, previous Placement) -> Placement.
#include <unistd.h>

#include "app/sia-place/place.hpp"
#include "cli/heap_hint.hpp"
#include "common/cli_app.hpp"
#include "common/shared_flags.hpp"
#include "core/document.hpp"

int main(int argc, char** argv) {
  sia::cli::prefer_huge_page_heap();  // multi-megabyte JSON in, out, exit
  sia::keep_documents_until_exit();
  const char* program = "sia-place";
  CLI::App app{
      "Map an allocation onto nodes and GPU indices.\n\n"
      "Reads an Allocation (sia-solve) and writes a Placement for sia-run.\n\n"
      "Examples:\n"
      "  sia-estimate --cluster c.toml jobs.json | sia-solve | sia-place --cluster c.toml\n"
      "  sia-place --previous last-placement.json -o table allocation.json",
      program};
  sia::cli::CommonFlags common;
  sia::app::PlaceArgs a;
  app.add_option("allocation", a.input, "Allocation file, or - for stdin (default: stdin)");
  sia::cli::add_cluster_flag(app, a.cluster, "Cluster description",
                             "the one the allocation carries");
  app.add_option("--previous", a.previous, "The previous round's Placement");
  sia::cli::add_compat_flag(app, a.compat);
  app.add_flag("--explain", a.explain, "Say why each job is where it is, or why it waits");
  sia::cli::add_common_flags(app, common);
  if (int rc = sia::cli::parse(app, argc, argv, common, program); rc >= 0) return rc;
  a.format = common.format();
  return sia::cli::run(program, [&] {
    if (a.input == "-" && isatty(0)) {
      throw sia::Error(sia::ExitStatus::usage, "no allocation given and stdin is a terminal");
    }
    return sia::app::run_place(a);
  });
}
