// make_dirs: creates a directory and its missing parents (lib/os). The directory gets
// exactly `mode` and each parent it creates `parents` (the same unless given), whatever the
// umask (private, 0700, unless the caller says otherwise); one that exists is left as it is. Status
// 73 (cannot create) when it cannot: "<path>: cannot create: <why>". Thread-safety: safe from any
// thread (the file system serialises).
#pragma once

#include <string>

#include "os/safe_open.hpp"

namespace sia::os {

void make_dirs(const std::string& path, int mode = kPrivateDir, int parents = -1);

}  // namespace sia::os
