#include "os/clock.hpp"

#include <cmath>
#include <cstdio>
#include <thread>

namespace sia::os {

Clock::TimePoint SystemClock::now() const {
  return std::chrono::steady_clock::now();
}

void SystemClock::sleep_for(Duration d) {
  std::this_thread::sleep_for(d);
}

Clock& system_clock() {
  static SystemClock* clock = new SystemClock;  // never destroyed: usable from any exit path
  return *clock;
}

Clock::Duration span(double seconds) {
  constexpr double kMost = 1e9;
  if (!(seconds > -kMost)) seconds = seconds != seconds ? 0 : -kMost;
  if (seconds > kMost) seconds = kMost;
  // Rounded to the clock's tick, so that a sum of seconds computed in floating point lands
  // on the instant it names.
  const double ticks = seconds * static_cast<double>(Clock::Duration::period::den) /
                       static_cast<double>(Clock::Duration::period::num);
  return Clock::Duration(static_cast<Clock::Duration::rep>(std::llround(ticks)));
}

double to_seconds(Clock::Duration d) {
  return std::chrono::duration<double>(d).count();
}

double now_seconds() {
  return to_seconds(system_clock().now().time_since_epoch());
}

std::string fmt_seconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

}  // namespace sia::os
