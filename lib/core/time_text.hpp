// The one reader of times and durations people write: a duration as digits and one unit
// ("30s", "90m", "36h", "2d") and a UTC date or time in ISO 8601 ("2026-12-05",
// "2026-12-05T18:00", "2026-12-05T18:00:00Z"). Both return nullopt for anything else, so
// that each caller names its own field and exit status. Used by job specs (`deadline`)
// and sia-ctl's flags (--since, --deadline).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>

namespace sia {

// Seconds in a duration: a whole number (at most 11 digits) and one of s, m, h, d.
std::optional<double> duration_seconds(const std::string& text);

// Seconds since the epoch of a UTC date ("2026-12-05": its midnight), a time to the minute
// ("2026-12-05T18:00", a trailing Z allowed) or to the second ("2026-12-05T18:00:00[Z]"),
// years 1970 to 9999.
std::optional<double> utc_seconds(const std::string& text);

// The other way: "2026-12-01T16:04:59Z"; "-" for NaN, beyond 10^15 s or what gmtime
// cannot convert.
std::string utc_text(double seconds);

}  // namespace sia
