#include "exec/clock.hpp"

#include <cmath>
#include <thread>

namespace sia::exec {

Clock::TimePoint SystemClock::now() const {
  return std::chrono::steady_clock::now();
}

void SystemClock::sleep_for(Duration d) {
  std::this_thread::sleep_for(d);
}

Clock::Duration seconds(double s) {
  // Saturating at 1e9 s (31 years): a huge value must never wrap into an instant deadline.
  if (!(s > -1e9)) s = s != s ? 0 : -1e9;
  if (s > 1e9) s = 1e9;
  return Clock::Duration(static_cast<Clock::Duration::rep>(std::llround(s * 1000.0)));
}

}  // namespace sia::exec
