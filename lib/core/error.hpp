// sia::Error is the one exception type the library throws for anything a user can cause:
// it carries the exit status the tools map it to and a message that already names the
// file, the field path and what was expected ("cluster.toml: node_groups[1].count: expected
// a positive integer, got -2"). Tools print it as "<program>: error: <message>".
// Thread-safety: plain value type.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/exit_status.hpp"

namespace sia {

class Error : public std::runtime_error {
 public:
  Error(ExitStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  ExitStatus status() const { return status_; }

 private:
  ExitStatus status_;
};

// "file: path: what" with empty parts left out.
std::string located(std::string_view file, std::string_view path, std::string_view what);

[[noreturn]] void throw_data_error(std::string_view file, std::string_view path,
                                   std::string_view what);
[[noreturn]] void throw_config_error(std::string_view file, std::string_view path,
                                     std::string_view what);

}  // namespace sia
