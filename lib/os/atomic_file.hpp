// Writes a file so that readers see either the old content or the new one, never a torn
// mix (lib/os): a temporary file next to it (created O_EXCL under a random name, never
// through a link: safe_open.hpp), fsynced, renamed over the target, the directory fsynced.
// The file is made with `mode`, less the umask -- private (0600) unless the caller says
// otherwise (kPublicFile for an output a user asked for): what sia keeps about jobs is
// readable by its owner only, whatever the umask. Errors (Error,
// status 73 cannot-create or 74 I/O) name the path.
// Thread-safety: safe for distinct paths.
#pragma once

#include <string>
#include <string_view>

#include "os/safe_open.hpp"

namespace sia::os {

// With `owner`, the file is that account's (so that it can read a private file).
void write_file_atomic(const std::string& path, std::string_view content, int mode = kPrivateFile,
                       const Account* owner = nullptr);

}  // namespace sia::os
