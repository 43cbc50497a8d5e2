#include "plot/scale.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sia::plot {

double Scale::operator()(double v) const {
  v = std::clamp(v, lo, hi);
  double f = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                 : (v - lo) / (hi - lo);
  return from + f * (to - from);
}

std::string Scale::label(double v) const {
  if (log) return format_number(v, v < 1 ? static_cast<int>(std::ceil(-std::log10(v))) : 0);
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return format_number(v, std::max(decimals, 0));
}

double nice_step(double span, int intervals) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / std::max(intervals, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  }
  return 10 * mag;
}

namespace {

Scale linear_scale(double lo, double hi, double from, double to, int max_ticks, double min_step) {
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
    if (lo < 0 && lo + pad >= 0) lo = 0;  // a non-negative value keeps a zero base
  }
  Scale s;
  s.from = from;
  s.to = to;
  int intervals = std::max(max_ticks - 1, 1);
  for (;; --intervals) {
    s.step = std::max(nice_step(hi - lo, intervals), min_step);
    s.lo = std::floor(lo / s.step + 1e-9) * s.step;
    s.hi = std::ceil(hi / s.step - 1e-9) * s.step;
    if ((s.hi - s.lo) / s.step <= max_ticks - 1 + 1e-9 || intervals == 1) break;
  }
  if (s.hi <= s.lo) s.hi = s.lo + s.step;
  const long n = std::lround((s.hi - s.lo) / s.step);
  for (long i = 0; i <= n; ++i) {
    double t = s.lo + i * s.step;
    if (std::abs(t) < s.step * 1e-9) t = 0;
    s.ticks.push_back(t);
  }
  return s;
}

Scale log_scale(double lo, double hi, double from, double to, int max_ticks) {
  Scale s;
  s.log = true;
  s.from = from;
  s.to = to;
  int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (e1 <= e0) e1 = e0 + 1;
  s.lo = std::pow(10.0, e0);
  s.hi = std::pow(10.0, e1);
  const int decades = e1 - e0;
  if (decades <= 2 && 3 * decades + 1 <= max_ticks) {
    for (int e = e0; e <= e1; ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (e == e1 && m > 1) break;
        s.ticks.push_back(m * std::pow(10.0, e));
      }
    }
  } else {
    const int every =
        std::max(1, (decades + std::max(max_ticks - 1, 1) - 1) / std::max(max_ticks - 1, 1));
    for (int e = e0; e <= e1; e += every) s.ticks.push_back(std::pow(10.0, e));
  }
  return s;
}

}  // namespace

Scale make_scale(double lo, double hi, bool log, double from, double to, int max_ticks,
                 double min_step) {
  if (lo > hi) std::swap(lo, hi);
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  max_ticks = std::max(max_ticks, 2);
  if (log) {
    if (!(lo > 0)) lo = hi > 0 ? hi / 10 : 1;
    if (!(hi > 0)) hi = 10;
    return log_scale(lo, hi, from, to, max_ticks);
  }
  return linear_scale(lo, hi, from, to, max_ticks, min_step);
}

Scale fitted_scale(double lo, double hi, bool log, double from, double to, bool horizontal,
                   double char_px, double gap_px, double min_step) {
  const double length = std::abs(to - from);
  for (int n = std::max(2, static_cast<int>(length / (2 * char_px + gap_px)) + 1);; --n) {
    Scale s = make_scale(lo, hi, log, from, to, n, min_step);
    if (n <= 2 || s.ticks.size() < 2) return s;
    // Room between neighbouring ticks against the widest label (or one line of text).
    double room = length;
    std::size_t widest = 0;
    for (std::size_t i = 0; i < s.ticks.size(); ++i) {
      widest = std::max(widest, s.label(s.ticks[i]).size());
      if (i) room = std::min(room, std::abs(s(s.ticks[i]) - s(s.ticks[i - 1])));
    }
    const double need = (horizontal ? widest * char_px : char_px) + gap_px;
    if (room >= need) return s;
  }
}

std::string format_number(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  const double a = std::abs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.0e", v);
    std::string s = buf;  // "1e+06" -> "1e6", "1e-04" -> "1e-4"
    auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    bool neg = exp[0] == '-';
    exp = exp.substr(1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    return mant + "e" + (neg ? "-" : "") + exp;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 9), v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace sia::plot
