#include "channel/clock.hpp"

#include <cstdio>

namespace sia::channel {

Clock::duration span(double seconds) {
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
