// The limits on JSON that sia reads -- from files, from peers, from the lines a job writes
// -- and the one way to parse it under them. Nesting deeper than kMaxJsonDepth levels is
// refused before parsing: the parser itself copes, but every later walk of the value
// (dump, copy, comparison) recurses, and a report line of 100,000 brackets must not take a
// daemon's stack with it. Numbers out of double range (1e400) are not JSON sia accepts, and
// neither is an object that names a key twice (TOML refuses that too; nlohmann's parser
// would keep the last silently). A UTF-8 byte order mark before the text is skipped, in
// JSON, TOML and CSV alike.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sia {

inline constexpr int kMaxJsonDepth = 64;

// True when no object or array in `text` is nested more than `max_depth` levels deep
// (brackets inside strings do not count). Linear, no recursion.
bool json_depth_ok(std::string_view text, int max_depth = kMaxJsonDepth);

// `text` without a leading UTF-8 byte order mark (EF BB BF).
std::string_view skip_bom(std::string_view text);

// `text` parsed under the limits above. On failure `value` is discarded and `error` says
// why, without a file name: "invalid JSON: parse error at line 1, column 2: ...", "nested
// more than 64 levels deep", "duplicate key \"name\" in jobs[2]". Never throws.
struct JsonParse {
  nlohmann::json value;
  std::string error;    // "" when `text` is JSON sia accepts
  bool syntax = false;  // the error is in the text's syntax (not depth, range or a key)
};
JsonParse parse_json_checked(std::string_view text);

// `text` parsed; a discarded value (is_discarded()) when it is not JSON, is nested too
// deeply, holds a number out of range or a duplicate key. Never throws.
nlohmann::json parse_json_bounded(std::string_view text);

}  // namespace sia
