// The small pieces of SVG and HTML text every chart and page is made of: escaping for
// text and attribute values, pixel coordinates as short decimal numbers, and the palette
// every chart takes its colours from (one colour per series, in order, so a policy or a
// GPU type keeps its colour from chart to chart when the callers keep its index).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sia::plot {

// Escapes &, <, >, " and ' (fit for text and attribute values of XML and HTML).
std::string escape(std::string_view text);

// A pixel coordinate with one decimal ("12.5", "-3", "0"); a non-finite value (never
// meant to happen) is written as 0 so that no document ever holds NaN.
std::string px(double v);

// The i-th colour (#rrggbb): the palette's ten first, then hues a golden angle apart at
// three lightnesses, never one colour for two indices from 10 to 4105.
std::string colour(std::size_t i);

// One colour per series, in order: series k's own index (`wanted[k]`, else k), moved on to
// the next index whose colour no earlier series has, so no two series share one.
std::vector<std::string> distinct_colours(const std::vector<std::optional<std::size_t>>& wanted);

}  // namespace sia::plot
