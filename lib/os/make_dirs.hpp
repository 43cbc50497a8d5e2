// make_dirs: creates a directory and its missing parents (lib/os). Status 73 (cannot
// create) when it cannot: "<path>: cannot create: <why>".
// Thread-safety: safe from any thread (the file system serialises).
#pragma once

#include <string>

namespace sia::os {

void make_dirs(const std::string& path);

}  // namespace sia::os
