// Placeholder while the gavel policy is being written (see baselines.hpp).
#include "core/error.hpp"
#include "policy/baselines.hpp"

namespace sia {
std::unique_ptr<Policy> make_gavel_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy gavel: not available in this build");
}
std::unique_ptr<Policy> make_ftf_lp_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy ftf-lp: not available in this build");
}
std::unique_ptr<Policy> make_fifo_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy fifo: not available in this build");
}
std::unique_ptr<Policy> make_srtf_policy(const PolicyOptions&) {
  throw Error(ExitStatus::usage, "--policy srtf: not available in this build");
}
}  // namespace sia
