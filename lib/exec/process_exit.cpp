#include "exec/process_exit.hpp"

#include <algorithm>

namespace sia::exec {

std::optional<ProcessExit> combine_exits(const std::vector<ProcessExit>& exits) {
  if (exits.empty()) return std::nullopt;
  int code = 0, signal = 0;
  for (const auto& e : exits) {
    if (e.signal) {
      signal = std::max(signal, e.signal);
    } else {
      code = std::max(code, e.code);
    }
  }
  if (code) return ProcessExit::exited(code);
  if (signal) return ProcessExit::killed(signal);
  return ProcessExit::exited(0);
}

}  // namespace sia::exec
