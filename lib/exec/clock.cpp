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
  return Clock::Duration(static_cast<Clock::Duration::rep>(std::llround(s * 1000.0)));
}

}  // namespace sia::exec
