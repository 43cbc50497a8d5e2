// Writes a file so that readers see either the old content or the new one, never a torn
// mix: write a temporary file next to it, fsync it, rename it over the target, fsync the
// directory. Errors (Error, status 73 cannot-create or 74 I/O) name the path.
// Thread-safety: safe for distinct paths.
#pragma once

#include <string>
#include <string_view>

namespace sia {

void write_file_atomic(const std::string& path, std::string_view content, int mode = 0644);

}  // namespace sia
