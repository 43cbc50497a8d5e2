// The limits on JSON that sia reads -- from files, from peers, from the lines a job writes
// -- and the one way to parse it under them. Nesting deeper than kMaxJsonDepth levels is
// refused before parsing: the parser itself copes, but every later walk of the value
// (dump, copy, comparison) recurses, and a report line of 100,000 brackets must not take a
// daemon's stack with it. Numbers out of double range (1e400) are not JSON sia accepts.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace sia {

inline constexpr int kMaxJsonDepth = 64;

// True when no object or array in `text` is nested more than `max_depth` levels deep
// (brackets inside strings do not count). Linear, no recursion.
bool json_depth_ok(std::string_view text, int max_depth = kMaxJsonDepth);

// `text` parsed; a discarded value (is_discarded()) when it is not JSON, is nested too
// deeply, or holds a number out of range. Never throws.
nlohmann::json parse_json_bounded(std::string_view text);

}  // namespace sia
