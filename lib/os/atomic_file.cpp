#include "os/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace sia::os {

void write_file_atomic(const std::string& path, std::string_view content, int mode,
                       const Account* owner) {
  // The caller's own directory, followed as given (it may be a link an administrator made);
  // only the names in it are handled by safe_open's rule.
  auto [dir, name] = split_path(path);
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) {
    throw Error(ExitStatus::cant_create, path + ": cannot create: " + std::strerror(errno));
  }
  write_file_atomic_in(d.get(), name, content, mode, owner, path);
}

}  // namespace sia::os
