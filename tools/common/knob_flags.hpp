// The policy knobs as command-line flags, one per row of the knob table (policy/knobs.hpp)
// that the program takes: the row's flag name, help text and type, bound to the field of
// PolicyOptions, its default shown in --help; a boolean also has --no-NAME. The ranges are
// checked after parsing, by validate_policy_options (make_policy), naming the flag.
// Include it from a program's main.cpp only (CLI11 is expensive to compile).
#pragma once

#include <map>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "policy/knobs.hpp"

namespace sia::cli {

// The knobs' options, by knob key.
using KnobOptions = std::map<std::string, CLI::Option*>;

// Adds a flag for each knob whose scope has a bit of `scope` (KnobScope).
inline KnobOptions add_knob_flags(CLI::App& app, PolicyOptions& o, unsigned scope) {
  KnobOptions added;
  for (const Knob& k : knob_table()) {
    if (!(k.scope & scope)) continue;
    added[k.key] = std::visit(
        [&](auto m) -> CLI::Option* {
          using T = std::remove_reference_t<decltype(o.*m)>;
          if constexpr (std::is_same_v<T, bool>) {
            return app.add_flag(std::string(k.flag) + ",!--no-" + (k.flag + 2), o.*m, k.help);
          } else {
            return app.add_option(k.flag, o.*m, k.help)->capture_default_str();
          }
        },
        k.field);
  }
  return added;
}

// The keys of the knobs given on the command line (after parsing).
inline std::set<std::string> given_knobs(const KnobOptions& options) {
  std::set<std::string> given;
  for (const auto& [key, option] : options) {
    if (option->count() > 0) given.insert(key);
  }
  return given;
}

}  // namespace sia::cli
