// The flags every sia program has (-o/--output, -q, -v, --version) and the parse step
// that maps CLI11's errors to exit status 64. Include it from a program's main.cpp only:
// CLI11 is header-only and expensive to compile.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/tool.hpp"
#include "core/error.hpp"
#include "core/exit_status.hpp"

namespace sia::cli {

struct CommonFlags {
  std::string output = "json";
  int verbose = 0;
  bool quiet = false;
  bool version = false;

  Format format() const {
    if (output == "table") return Format::table;
    if (output == "jsonl") return Format::jsonl;
    if (output == "csv") return Format::csv;
    return Format::json;
  }
};

inline void add_common_flags(CLI::App& app, CommonFlags& f,
                             std::vector<std::string> formats = {"json", "table"}) {
  app.add_option("-o,--output", f.output, "Output format")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  app.add_flag("-v,--verbose", f.verbose, "More diagnostics on stderr (repeat for more)");
  app.add_flag("-q,--quiet", f.quiet, "Only errors on stderr");
  app.add_flag("--version", f.version, "Print the version (with -o json: build information)");
}

// Parses; returns -1 to go on, else the status to exit with (0 after --help).
inline int parse(CLI::App& app, int argc, char** argv, CommonFlags& f, const char* program) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    write_stderr(std::string(program) + ": error: " + e.what() + " (see " + program + " --help)\n");
    return to_int(ExitStatus::usage);
  }
  set_verbosity(f.quiet ? -1 : f.verbose);
  if (f.version) {
    write_stdout(version_text(
        program, f.output == "json" && app.count("--output") ? Format::json : Format::table));
    return 0;
  }
  return -1;
}

}  // namespace sia::cli
