#include "worker/stop_signal.hpp"

#include <csignal>

namespace sia::worker {

namespace {
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
}
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

bool stop_requested() {
  return g_signal != 0;
}
int stop_signal() {
  return g_signal;
}
void request_stop() {
  g_signal = SIGTERM;
}
void clear_stop() {
  g_signal = 0;
}

}  // namespace sia::worker
