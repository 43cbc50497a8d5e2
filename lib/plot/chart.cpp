#include "plot/chart.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "plot/scale.hpp"
#include "plot/svg.hpp"

namespace sia::plot {

namespace {

constexpr double kCharPx = 7;     // width of a character of 12 px sans-serif, roughly
constexpr double kLinePx = 14;    // height of a line of tick labels
constexpr double kTitlePx = 26;   // the title's band
constexpr double kLegendPx = 18;  // one row of the legend
constexpr std::size_t kMaxLegend = 16;
constexpr std::size_t kMaxDots = 400;  // markers per series; more would be a smear

bool usable(double v, bool log) {
  return std::isfinite(v) && (!log || v > 0);
}

// The points that can be drawn, in x order.
std::vector<std::vector<std::pair<double, double>>> clean(const Chart& c) {
  std::vector<std::vector<std::pair<double, double>>> out;
  for (const auto& s : c.series) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [x, y] : s.points) {
      if (usable(x, c.x.log) && usable(y, c.y.log && c.mark != Mark::stacked)) {
        pts.emplace_back(x, y);
      }
    }
    std::stable_sort(pts.begin(), pts.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    out.push_back(std::move(pts));
  }
  return out;
}

struct LegendItem {
  std::string text;
  std::string colour;
  double x, y;
};

std::string text(double x, double y, const std::string& s, const std::string& attrs = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" + (attrs.empty() ? "" : " " + attrs) +
         ">" + escape(s) + "</text>";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
         "\" " + attrs + "/>";
}

}  // namespace

std::string axis_title(const Axis& axis) {
  return axis.unit.empty() ? axis.label : axis.label + " (" + axis.unit + ")";
}

namespace {

using Points = std::vector<std::vector<std::pair<double, double>>>;

// Stacked areas: the running totals at every x of any series.
struct Stack {
  std::vector<double> xs;
  std::vector<std::vector<double>> tops;  // tops[k][i]: series 0..k at xs[i]
};

Stack stack(const Points& pts) {
  Stack st;
  for (const auto& p : pts) {
    for (const auto& pt : p) st.xs.push_back(pt.first);
  }
  std::sort(st.xs.begin(), st.xs.end());
  st.xs.erase(std::unique(st.xs.begin(), st.xs.end()), st.xs.end());
  std::vector<double> sum(st.xs.size(), 0.0);
  for (const auto& p : pts) {
    std::map<double, double> at;
    for (const auto& pt : p) at[pt.first] += pt.second;
    for (std::size_t i = 0; i < st.xs.size(); ++i) {
      auto it = at.find(st.xs[i]);
      sum[i] += it == at.end() ? 0 : std::max(it->second, 0.0);
    }
    st.tops.push_back(sum);
  }
  return st;
}

// The ranges the axes show: the data's (the stack's top included), a default without
// data, 0 included under bars and areas, then the chart's own limits.
struct Ranges {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
};

Ranges ranges(const Chart& c, const Points& pts, const Stack& st, bool has_data) {
  Ranges r;
  for (std::size_t k = 0; k < pts.size(); ++k) {
    for (std::size_t i = 0; i < pts[k].size(); ++i) {
      r.x0 = std::min(r.x0, pts[k][i].first);
      r.x1 = std::max(r.x1, pts[k][i].first);
      r.y0 = std::min(r.y0, pts[k][i].second);
      r.y1 = std::max(r.y1, pts[k][i].second);
    }
  }
  if (c.mark == Mark::stacked && !st.tops.empty()) {
    for (double t : st.tops.back()) r.y1 = std::max(r.y1, t);
  }
  if (!has_data) {
    r.x0 = c.x.log ? 1 : 0;
    r.x1 = c.x.log ? 10 : 1;
    r.y0 = c.y.log ? 1 : 0;
    r.y1 = c.y.log ? 10 : 1;
  }
  if (c.mark == Mark::stacked || c.mark == Mark::bars) r.y0 = std::min(r.y0, 0.0);
  if (c.x.min) r.x0 = *c.x.min;
  if (c.x.max) r.x1 = *c.x.max;
  if (c.y.min) r.y0 = *c.y.min;
  if (c.y.max) r.y1 = *c.y.max;
  return r;
}

// The legend's items, in rows under the title across the width W; `ly` ends below them.
std::vector<LegendItem> legend_items(const Chart& c, const std::vector<std::string>& colours,
                                     double W, double& ly) {
  std::vector<LegendItem> legend;
  const bool show_legend =
      c.series.size() > 1 || (c.series.size() == 1 && !c.series[0].name.empty());
  if (!show_legend) return legend;
  double lx = 12;
  const std::size_t n = std::min(c.series.size(), kMaxLegend);
  for (std::size_t k = 0; k <= n; ++k) {
    std::string name;
    if (k < n) {
      name = c.series[k].name.empty() ? "(unnamed)" : c.series[k].name;
    } else if (c.series.size() > n) {
      name = "+" + std::to_string(c.series.size() - n) + " more";
    } else {
      break;
    }
    const double w = 18 + name.size() * kCharPx + 14;
    if (lx + w > W - 8 && lx > 12) lx = 12, ly += kLegendPx;
    legend.push_back({name, k < n ? colours[k] : std::string("#ffffff"), lx, ly});
    lx += w;
  }
  ly += kLegendPx;
  return legend;
}

// The x scale of bars: integer categories, every k-th labelled so that labels keep apart.
Scale category_scale(const Chart& c, double x0, double x1, double left, double right) {
  Scale xs = make_scale(std::floor(x0) - 0.5, std::ceil(x1) + 0.5, false, left, right, 2);
  xs.lo = std::floor(x0) - 0.5;
  xs.hi = std::ceil(x1) + 0.5;
  xs.step = 1;
  xs.ticks.clear();
  const double slot = (right - left) / (xs.hi - xs.lo);
  std::size_t chars = format_number(std::ceil(x1), 0).size();
  for (const auto& cat : c.categories) chars = std::max(chars, cat.size());
  const double label_w = (chars + 1) * kCharPx + 6;
  const long every = std::max(1L, static_cast<long>(std::ceil(label_w / slot)));
  // From the last down, so that the last category (often "N or more") has its label.
  for (double t = std::ceil(x1); t >= std::floor(x0); t -= every) xs.ticks.push_back(t);
  std::reverse(xs.ticks.begin(), xs.ticks.end());
  return xs;
}

// The plot area: its scales and pixel bounds.
struct Frame {
  Scale xs, ys;
  double left, right, top, bottom;
};

// Axes: grid lines, ticks, labels, titles.
std::string axes(const Chart& c, const Frame& f, double H) {
  std::string s = "<g class=\"axis y\">";
  for (double t : f.ys.ticks) {
    const double y = f.ys(t);
    s += line(f.left, y, f.right, y, "stroke=\"#e4e4e4\"");
    s += text(f.left - 6, y + 4, f.ys.label(t), "text-anchor=\"end\"");
  }
  s += line(f.left, f.top, f.left, f.bottom, "stroke=\"#333333\"");
  const double ymid = (f.top + f.bottom) / 2;
  s += text(14, ymid, axis_title(c.y),
            "text-anchor=\"middle\" transform=\"rotate(-90 14 " + px(ymid) + ")\"");
  s += "</g><g class=\"axis x\">";
  for (double t : f.xs.ticks) {
    const double x = f.xs(t);
    if (c.mark != Mark::bars) s += line(x, f.top, x, f.bottom, "stroke=\"#f0f0f0\"");
    s += line(x, f.bottom, x, f.bottom + 4, "stroke=\"#333333\"");
    const auto i = static_cast<std::size_t>(std::max(t, 0.0));
    const bool named = c.mark == Mark::bars && t >= 0 && i < c.categories.size();
    s += text(x, f.bottom + 17, named ? c.categories[i] : f.xs.label(t), "text-anchor=\"middle\"");
  }
  s += line(f.left, f.bottom, f.right, f.bottom, "stroke=\"#333333\"");
  s += text((f.left + f.right) / 2, H - 8, axis_title(c.x), "text-anchor=\"middle\"");
  s += "</g>";
  return s;
}

// Series k's marks: its area, bars, or line (with dots).
std::string series_marks(const Chart& c, const Points& pts, std::size_t k, const Stack& st,
                         const std::string& col, const Frame& f) {
  const auto& p = pts[k];
  const std::string name = escape(c.series[k].name);
  auto X = [&](double v) { return px(f.xs(v)); };
  auto Y = [&](double v) { return px(f.ys(v)); };
  std::string s;
  if (c.mark == Mark::stacked) {
    const auto& xs = st.xs;
    const auto& tops = st.tops;
    if (xs.empty()) return s;
    // Steps: a value holds until the next x (a round's allocation lasts the round).
    auto base = [&](std::size_t i) { return k ? tops[k - 1][i] : 0.0; };
    std::string d = "M" + X(xs[0]) + "," + Y(tops[k][0]);
    for (std::size_t i = 1; i < xs.size(); ++i) d += "H" + X(xs[i]) + "V" + Y(tops[k][i]);
    d += "V" + Y(base(xs.size() - 1));
    for (std::size_t i = xs.size() - 1; i-- > 0;) d += "H" + X(xs[i + 1]) + "V" + Y(base(i));
    d += "H" + X(xs[0]);
    s += "<path class=\"mark area\" d=\"" + d + "Z\" fill=\"" + col +
         "\" fill-opacity=\"0.85\" stroke=\"none\"><title>" + name + "</title></path>";
  } else if (c.mark == Mark::bars) {
    const double slot = (f.right - f.left) / (f.xs.hi - f.xs.lo);
    const double bw = slot * 0.8 / std::max<std::size_t>(pts.size(), 1);
    for (const auto& [x, y] : p) {
      const double bx = f.xs(x) - slot * 0.4 + k * bw;
      const double by = f.ys(std::max(y, 0.0)), base = f.ys(std::max(f.ys.lo, 0.0));
      s += "<rect class=\"mark bar\" x=\"" + px(bx) + "\" y=\"" + px(std::min(by, base)) +
           "\" width=\"" + px(std::max(bw - 1, 1.0)) + "\" height=\"" + px(std::abs(base - by)) +
           "\" fill=\"" + col + "\"><title>" + name + ": " + format_number(y, 3) +
           "</title></rect>";
    }
  } else if (!p.empty()) {
    std::string d = "M" + X(p[0].first) + "," + Y(p[0].second);
    for (std::size_t i = 1; i < p.size(); ++i) {
      if (c.mark == Mark::step)
        d += "H" + X(p[i].first) + "V" + Y(p[i].second);
      else
        d += "L" + X(p[i].first) + "," + Y(p[i].second);
    }
    s += "<path class=\"mark line\" d=\"" + d + "\" fill=\"none\" stroke=\"" + col +
         "\" stroke-width=\"2\"><title>" + name + "</title></path>";
    if (c.markers && p.size() <= kMaxDots) {
      for (const auto& [x, y] : p) {
        s += "<circle class=\"mark dot\" cx=\"" + X(x) + "\" cy=\"" + Y(y) + "\" r=\"3\" fill=\"" +
             col + "\"/>";
      }
    }
  }
  return s;
}

}  // namespace

std::string render_svg(const Chart& c) {
  const double W = std::max(c.width, 200), H = std::max(c.height, 150);
  const auto pts = clean(c);
  bool has_data = false;
  for (const auto& p : pts) has_data = has_data || !p.empty();
  const Stack st = c.mark == Mark::stacked ? stack(pts) : Stack{};
  const Ranges r = ranges(c, pts, st, has_data);

  // Legend rows, then the plot area.
  std::vector<std::optional<std::size_t>> wanted;
  for (const auto& sr : c.series) wanted.push_back(sr.colour);
  const std::vector<std::string> colours = distinct_colours(wanted);
  double ly = kTitlePx + 8;
  const std::vector<LegendItem> legend = legend_items(c, colours, W, ly);
  Frame f;
  f.top = ly + 6;
  f.bottom = H - 44;
  // The y scale first: the widest of its labels decides the left margin.
  f.ys =
      fitted_scale(r.y0, r.y1, c.y.log, f.bottom, f.top, false, kLinePx, 10, c.y.integer ? 1 : 0);
  std::size_t widest = 1;
  for (double t : f.ys.ticks) widest = std::max(widest, f.ys.label(t).size());
  f.left = 22 + widest * kCharPx + 8;
  f.right = W - 16;
  f.xs = c.mark == Mark::bars ? category_scale(c, r.x0, r.x1, f.left, f.right)
                              : fitted_scale(r.x0, r.x1, c.x.log, f.left, f.right, true, kCharPx,
                                             12, c.x.integer ? 1 : 0);

  std::string s;
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + px(W) +
       "\" height=\"" + px(H) + "\" viewBox=\"0 0 " + px(W) + " " + px(H) +
       "\" role=\"img\" aria-label=\"" + escape(c.title) +
       "\" font-family=\"sans-serif\" font-size=\"12\">";
  s += "<title>" + escape(c.title) + "</title>";
  s += "<rect class=\"background\" x=\"0\" y=\"0\" width=\"" + px(W) + "\" height=\"" + px(H) +
       "\" fill=\"#ffffff\"/>";
  s += text(12, 18, c.title, "class=\"title\" font-size=\"15\" font-weight=\"bold\"");
  s += axes(c, f, H);
  s += "<g class=\"data\">";
  for (std::size_t k = 0; k < pts.size(); ++k) s += series_marks(c, pts, k, st, colours[k], f);
  s += "</g>";
  if (!has_data) {
    s += text((f.left + f.right) / 2, (f.top + f.bottom) / 2, "no data",
              "class=\"nodata\" text-anchor=\"middle\" font-size=\"16\" fill=\"#888888\"");
  }
  if (!legend.empty()) {
    s += "<g class=\"legend\">";
    for (const auto& it : legend) {
      if (it.colour != "#ffffff") {
        s += "<rect x=\"" + px(it.x) + "\" y=\"" + px(it.y - 10) +
             "\" width=\"12\" height=\"12\" fill=\"" + it.colour + "\"/>";
      }
      s += text(it.x + 18, it.y, it.text);
    }
    s += "</g>";
  }
  s += "</svg>";
  return s;
}

}  // namespace sia::plot
