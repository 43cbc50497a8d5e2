// SIGTERM and SIGINT for the long-running programs (sia-ctl serve, sia-run agent): each
// signal adds one to a counter -- the first asks for a graceful stop, a second for leaving
// at once. The handlers do not restart interrupted system calls, so a blocking poll
// returns early and the loop sees the request.
// Thread-safety: the counter is a lock-free atomic; install once from the main thread.
#pragma once

#include <atomic>

namespace sia::cli {

void install_counting_stop_handlers();
std::atomic<int>& stop_signals();

}  // namespace sia::cli
