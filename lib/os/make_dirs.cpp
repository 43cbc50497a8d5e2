#include "os/make_dirs.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace sia::os {

void make_dirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error(ExitStatus::cant_create, path + ": cannot create: " + ec.message());
}

}  // namespace sia::os
