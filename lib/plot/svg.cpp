#include "plot/svg.hpp"

#include <cmath>
#include <cstdio>
#include <set>

namespace sia::plot {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters are not allowed in XML 1.0; show them as a space.
        out += (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') ? ' ' : c;
    }
  }
  return out;
}

std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

std::string colour(std::size_t i) {
  // Ten colours that stay distinct on screen and in grey print (the "Tableau 10" set).
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                         "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  constexpr std::size_t kN = sizeof kPalette / sizeof kPalette[0];
  if (i < kN) return kPalette[i];
  // Beyond it: hue by the golden angle (far from the hues before), lightness 0.45, 0.6,
  // 0.35 in turn, saturation 0.55 (HSL).
  const std::size_t j = i - kN;
  const double h = std::fmod(static_cast<double>(j) * 137.50776405, 360.0) / 60.0;
  const double l = (j % 3 == 0) ? 0.45 : (j % 3 == 1) ? 0.6 : 0.35, s = 0.55;
  const double c = (1 - std::fabs(2 * l - 1)) * s, x = c * (1 - std::fabs(std::fmod(h, 2) - 1));
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h)) {
    case 0:
      r = c, g = x;
      break;
    case 1:
      r = x, g = c;
      break;
    case 2:
      g = c, b = x;
      break;
    case 3:
      g = x, b = c;
      break;
    case 4:
      r = x, b = c;
      break;
    default:
      r = c, b = x;
      break;
  }
  const double m = l - c / 2;
  // The high nibble of each channel from the hue, the low nibbles spell j (12 bits): two
  // indices never round to one colour.
  auto channel = [&](double v, int bits) {
    return (static_cast<int>(std::lround((v + m) * 255)) & 0xf0) | (bits & 0x0f);
  };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", channel(r, static_cast<int>(j >> 8)),
                channel(g, static_cast<int>(j >> 4)), channel(b, static_cast<int>(j)));
  return buf;
}

std::vector<std::string> distinct_colours(const std::vector<std::optional<std::size_t>>& wanted) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (std::size_t k = 0; k < wanted.size(); ++k) {
    std::size_t i = wanted[k].value_or(k);
    std::string c = colour(i);
    // The next indices' colours differ from one another: this ends long before the bound.
    for (std::size_t tries = 0; used.count(c) && tries < 4 * wanted.size() + 16; ++tries) {
      c = colour(++i);
    }
    used.insert(c);
    out.push_back(c);
  }
  return out;
}

}  // namespace sia::plot
