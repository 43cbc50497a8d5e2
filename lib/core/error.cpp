#include "core/error.hpp"

namespace sia {

std::string located(std::string_view file, std::string_view path, std::string_view what) {
  std::string out;
  if (!file.empty()) {
    out += file;
    out += ": ";
  }
  if (!path.empty()) {
    out += path;
    out += ": ";
  }
  out += what;
  return out;
}

void throw_data_error(std::string_view file, std::string_view path, std::string_view what) {
  throw Error(ExitStatus::data, located(file, path, what));
}

void throw_config_error(std::string_view file, std::string_view path, std::string_view what) {
  throw Error(ExitStatus::config, located(file, path, what));
}

}  // namespace sia
