#include "os/make_dirs.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <vector>

#include "core/error.hpp"

namespace sia::os {

void make_dirs(const std::string& path, int mode, int parents) {
  namespace fs = std::filesystem;
  // The missing directories, deepest last.
  std::vector<fs::path> missing;
  std::error_code ec;
  std::string target = fs::path(path).lexically_normal().string();
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  for (fs::path p = target; !p.empty(); p = p.parent_path()) {
    if (fs::exists(p, ec) || p == p.parent_path()) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    const std::string dir = it->string();
    if (dir.empty() || *it == "." || *it == "..") continue;
    if (::mkdir(dir.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;  // made meanwhile by someone else: theirs to set
      throw Error(ExitStatus::cant_create, path + ": cannot create: " + std::strerror(errno));
    }
    Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    const int m = std::next(it) == missing.rend() || parents < 0 ? mode : parents;
    if (!fd || ::fchmod(fd.get(), static_cast<mode_t>(m)) != 0) {
      throw Error(ExitStatus::cant_create, dir + ": cannot set its mode: " + std::strerror(errno));
    }
  }
  if (!fs::is_directory(path, ec)) {
    throw Error(ExitStatus::cant_create, path + ": cannot create: not a directory");
  }
}

}  // namespace sia::os
