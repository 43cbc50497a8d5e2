// The exit statuses of a training worker (see man/sia-worker.7), beyond the shared ones of
// core/exit_status.hpp: sia-run and sia-profile act on them. 0 means training is done.
// Thread-safety: constants.
#pragma once

#include "core/exit_status.hpp"

namespace sia::worker {

// SIGTERM honoured: the optimizer step finished, rank 0 wrote a checkpoint, resume me.
inline constexpr ExitStatus kPreempted = ExitStatus::temp_fail;  // 75
// The local batch does not fit the device (or the CPU memory limit): a smaller one may.
inline constexpr ExitStatus kOutOfMemory = static_cast<ExitStatus>(71);
// A peer went away or timed out, or the rendezvous failed.
inline constexpr ExitStatus kPeerLost = ExitStatus::unavailable;  // 69

}  // namespace sia::worker
