// The steady clock the control channel's loops (hub, agent, controller daemon) run on, and
// its conversions: configured seconds to a duration and back, and seconds for a log line
// ("2.5 s").
// Thread-safety: pure.
#pragma once

#include <chrono>
#include <string>

namespace sia::channel {

using Clock = std::chrono::steady_clock;

Clock::duration span(double seconds);  // saturating at +-1e9 s; NaN is 0
double seconds(Clock::duration d);
std::string fmt_seconds(double seconds);  // one decimal: "30.0 s"

}  // namespace sia::channel
