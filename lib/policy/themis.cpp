// Placeholder while the themis policy is being written (see baselines.hpp).
#include "core/error.hpp"
#include "policy/baselines.hpp"

namespace sia {
std::unique_ptr<Policy> make_themis_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy themis: not available in this build");
}
}  // namespace sia
