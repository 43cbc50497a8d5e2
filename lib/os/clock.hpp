// Clock: the one source of time for library code (supervision's grace periods and stop
// deadlines, the control channel's heartbeats, child-process time limits), so that tests
// can drive time by hand instead of sleeping. Times are monotonic: never the wall clock,
// which may jump. Part of lib/os, the operating-system layer (processes, files, time).
// Also: seconds (as configured) to a duration and back, and seconds for a log line.
// Thread-safety: SystemClock and the free functions are stateless and safe from any
// thread; fakes are not.
#pragma once

#include <chrono>
#include <string>

namespace sia::os {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual void sleep_for(Duration d) = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override;
  void sleep_for(Duration d) override;
};

// The process's system clock (a SystemClock; never destroyed).
Clock& system_clock();

// Seconds (as given on the command line or in a configuration) as a duration, saturating
// at +-1e9 s (31 years) so that a huge value never wraps into a deadline already past;
// NaN is 0.
Clock::Duration span(double seconds);
// A duration in seconds.
double to_seconds(Clock::Duration d);
// The system clock's reading in seconds (from an arbitrary origin): for measuring spans.
double now_seconds();
// Seconds for a log line, one decimal: "30.0 s".
std::string fmt_seconds(double seconds);

}  // namespace sia::os
