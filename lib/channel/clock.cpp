#include "channel/clock.hpp"

#include <cstdio>

namespace sia::channel {

Clock::duration span(double seconds) {
  // Saturating: a huge (or non-finite) number of seconds must never wrap into a negative
  // duration, a deadline already past. 1e9 s (31 years) is "never" for any timer here.
  constexpr double kMost = 1e9;
  if (!(seconds > -kMost)) seconds = seconds != seconds ? 0 : -kMost;
  if (seconds > kMost) seconds = kMost;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string fmt_seconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  return buf;
}

}  // namespace sia::channel
