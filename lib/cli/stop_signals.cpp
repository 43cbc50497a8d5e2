#include "cli/stop_signals.hpp"

#include <csignal>

namespace sia::cli {

namespace {
std::atomic<int> g_signals{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_counted_signal(int) {
  g_signals.fetch_add(1);
}
}  // namespace

void install_counting_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_counted_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a poll returns early
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

std::atomic<int>& stop_signals() {
  return g_signals;
}

}  // namespace sia::cli
