// What every fuzz target shares: the input as text, a scratch directory of the process's
// own for the entry points that read files, the bundled data the targets need (a
// cluster), and the one rule of the game -- sia::Error is an accepted rejection of bad
// input, unless its status is 70 (internal error: a bug by definition), which aborts; any
// other exception escapes to libFuzzer. Both are findings.
// Thread-safety: libFuzzer calls a target from one thread; so do these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/cluster.hpp"
#include "core/error.hpp"

namespace sia::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A directory of this process's own under $TMPDIR (or /tmp), created on first use and
// removed at exit; `name` inside it (files of a previous input are the caller's to remove).
const std::string& scratch_dir();
std::string scratch_path(const std::string& name);
// Writes `content` to `path` (mode 0600), replacing it.
void write_scratch(const std::string& path, std::string_view content);

// The bundled cluster the targets that need one use (data/clusters/sia-hetero-64.toml).
const Cluster& bundled_cluster();

// Runs `body`; sia::Error (the library's refusal of bad input) ends it quietly, but an
// internal error (status 70) is a finding.
template <class F>
int run(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    if (e.status() == ExitStatus::software) {
      std::fprintf(stderr, "fuzz: internal error (status 70): %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}

}  // namespace sia::fuzz
