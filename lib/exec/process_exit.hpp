// The srun rule sia-run uses to fold many processes' exits (os::ProcessExit) into one
// status: the highest exit code, else 128 + the highest signal.
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "os/process_exit.hpp"

namespace sia::exec {

// How one process ended: the operating-system layer decodes it (os/process_exit.hpp).
using os::ProcessExit;

// The srun rule: the highest non-zero exit code, else the highest signal, else success.
// nullopt for an empty list.
std::optional<ProcessExit> combine_exits(const std::vector<ProcessExit>& exits);

// Exit status of "preempted, resume me" in the worker contract (sysexits' EX_TEMPFAIL).
inline constexpr int kPreemptedExit = 75;
// Exit status of "a peer was lost" (sysexits' EX_UNAVAILABLE): a rank that ends so failed
// because another did, not by itself.
inline constexpr int kPeerLostExit = 69;

}  // namespace sia::exec
