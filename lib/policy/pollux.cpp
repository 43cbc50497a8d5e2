// Placeholder while the pollux policy is being written (see baselines.hpp).
#include "core/error.hpp"
#include "policy/baselines.hpp"

namespace sia {
std::unique_ptr<Policy> make_pollux_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy pollux: not available in this build");
}
}  // namespace sia
