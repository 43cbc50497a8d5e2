// The small pieces of SVG and HTML text every chart and page is made of: escaping for
// text and attribute values, pixel coordinates as short decimal numbers, and the palette
// every chart takes its colours from (one colour per series, in order, so a policy or a
// GPU type keeps its colour from chart to chart when the callers keep its index).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sia::plot {

// Escapes &, <, >, " and ' (fit for text and attribute values of XML and HTML).
std::string escape(std::string_view text);

// A pixel coordinate with one decimal ("12.5", "-3", "0"); a non-finite value (never
// meant to happen) is written as 0 so that no document ever holds NaN.
std::string px(double v);

// The i-th colour of the palette (#rrggbb), cycling past its end.
std::string colour(std::size_t i);

}  // namespace sia::plot
