// A program's subcommands as one table (ninja's kTools): each row names a subcommand, says
// in a line what it does, registers its flags and runs it. The CLI11 subcommands, the
// dispatch and the "expected a subcommand" list all come from the table, so a subcommand
// is said once. Include it from a program's main.cpp only (CLI11, as cli_app.hpp).
#pragma once

#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli_app.hpp"
#include "core/error.hpp"
#include "core/exit_status.hpp"

namespace sia::cli {

// Flags: the program's parsed values, one struct the rows register into and run from.
template <class Flags>
struct Subcommand {
  const char* name;
  const char* help;  // "": hidden (run by the programs themselves, not by people)
  void (*add_flags)(CLI::App& cmd, Flags& flags);
  int (*run)(Flags& flags);
};

// Adds one CLI11 subcommand per row, in the table's order (the order --help lists them).
template <class Flags>
void add_subcommands(CLI::App& app, std::span<const Subcommand<Flags>> table, Flags& flags) {
  for (const auto& row : table) {
    CLI::App* cmd = app.add_subcommand(row.name, row.help);
    if (*row.help == '\0') cmd->group("");
    if (row.add_flags) row.add_flags(*cmd, flags);
  }
}

// The name of the subcommand given on the command line, "" for none.
inline std::string given_subcommand(const CLI::App& app) {
  const auto given = app.get_subcommands();
  return given.empty() ? std::string() : given.front()->get_name();
}

// "a, b or c": the rows people run (hidden ones left out).
template <class Flags>
std::string subcommand_list(std::span<const Subcommand<Flags>> table) {
  std::string names, last;
  for (const auto& row : table) {
    if (*row.help == '\0') continue;
    if (!last.empty()) names += (names.empty() ? "" : ", ") + last;
    last = row.name;
  }
  return names.empty() ? last : names + " or " + last;
}

// Runs the row of the subcommand given; without one, a usage error that lists them.
template <class Flags>
int run_subcommand(const CLI::App& app, std::span<const Subcommand<Flags>> table, Flags& flags,
                   const char* program) {
  const std::string given = given_subcommand(app);
  for (const auto& row : table) {
    if (given == row.name) return row.run(flags);
  }
  throw Error(ExitStatus::usage,
              "expected a subcommand: " + subcommand_list(table) + " (see " + program + " --help)");
}

// A program's main after its own flags: adds the table's subcommands (at most one given;
// the program's flags also after it), parses, and runs the one given. `prepare`, when
// given, runs first, inside the error handling (checks across the flags, settings derived
// from them).
template <class Flags, std::size_t N>
int run_subcommands(CLI::App& app, int argc, char** argv, CommonFlags& common, const char* program,
                    const Subcommand<Flags> (&rows)[N], Flags& flags,
                    void (*prepare)(const CLI::App& app, Flags& flags) = nullptr) {
  const std::span<const Subcommand<Flags>> table(rows);
  app.require_subcommand(0, 1);
  app.fallthrough();  // the program's flags (-o, -q, -v, ...) also after the subcommand
  add_subcommands(app, table, flags);
  if (int rc = parse(app, argc, argv, common, program); rc >= 0) return rc;
  return run(program, [&] {
    if (prepare) prepare(app, flags);
    return run_subcommand(app, table, flags, program);
  });
}

}  // namespace sia::cli
