// The worker's graceful-stop request: SIGTERM (what sia-run sends on a reallocation) and
// SIGINT set a flag that the training loop reads between steps; the handlers restart
// interrupted system calls, so a step in flight completes.
// Thread-safety: async-signal-safe flag; install once from the main thread.
#pragma once

namespace sia::worker {

void install_stop_handlers();
bool stop_requested();
int stop_signal();    // the signal that asked, 0 if none
void request_stop();  // as if a SIGTERM had arrived (tests)
void clear_stop();    // tests

}  // namespace sia::worker
