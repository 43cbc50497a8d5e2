// Flags that set a configuration key (sia-config(5)), each named and described by the
// key's row in ctl::setting_infos(): the flag's name is the row's, its help says which key
// and environment variable it overrides, and its value lands in a SettingFlags map that
// ConfigSources::add_flags turns into the flag layer.
// Include it from a program's main.cpp only (CLI11 is expensive to compile).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "ctl/config.hpp"

namespace sia::cli {

inline CLI::Option* add_setting_flag(CLI::App& app, ctl::SettingFlags& values,
                                     const std::string& key, const std::string& what,
                                     const std::string& otherwise = "") {
  return app.add_option(ctl::setting_info(key).flag, values[key],
                        ctl::setting_flag_help(key, what, otherwise));
}

}  // namespace sia::cli
