// Clock: the one source of time for supervision (grace periods, stop deadlines, polling),
// so that tests drive time by hand instead of sleeping. Times are monotonic: never the
// wall clock, which may jump.
// Thread-safety: SystemClock is stateless and safe from any thread; fakes are not.
#pragma once

#include <chrono>

namespace sia::exec {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::milliseconds;

  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  virtual void sleep_for(Duration d) = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint now() const override;
  void sleep_for(Duration d) override;
};

// Seconds (as given on the command line) as a clock duration, rounded to milliseconds.
Clock::Duration seconds(double s);

}  // namespace sia::exec
