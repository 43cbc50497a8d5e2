// Scales and ticks for charts: a linear or logarithmic map from a data interval to pixels,
// with "nice" tick values (1, 2 or 5 times a power of ten; powers of ten on a log scale)
// whose labels fit the room the axis gives them. Data intervals are widened to whole
// ticks; an empty or one-value interval becomes a small interval around it, so the map
// never divides by zero and never yields NaN.
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <vector>

namespace sia::plot {

struct Scale {
  double lo = 0, hi = 1;    // domain (log: both above 0)
  double from = 0, to = 1;  // pixels that lo and hi map to
  bool log = false;
  std::vector<double> ticks;  // within [lo, hi], ascending
  double step = 1;            // linear tick step (decides label decimals)

  double operator()(double v) const;  // clamps to the domain first
  std::string label(double v) const;  // a tick label: "0.5", "20", "1e+06"
};

// The smallest of 1, 2, 5 (times a power of ten) that cuts `span` into at most `intervals`.
double nice_step(double span, int intervals);

// A scale for data in [lo, hi] (any order, finite; on a log scale values <= 0 are the
// caller's to drop) drawn from pixel `from` to `to`, with at most `max_ticks` ticks.
// A linear scale's ticks are at least `min_step` apart (1 for counts: no "0.5 jobs").
Scale make_scale(double lo, double hi, bool log, double from, double to, int max_ticks,
                 double min_step = 0);

// The same, with as many ticks as fit: labels `char_px` wide per character with `gap_px`
// between them along a horizontal axis (vertical: pass the line height as char_px and
// give `horizontal` false).
Scale fitted_scale(double lo, double hi, bool log, double from, double to, bool horizontal,
                   double char_px, double gap_px, double min_step = 0);

// A number for people: up to `decimals` decimals, trailing zeros dropped, no "-0";
// exponent notation beyond 1e6 and below 1e-3.
std::string format_number(double v, int decimals);

}  // namespace sia::plot
