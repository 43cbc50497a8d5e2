// Chart: one self-contained <svg> element drawn from series of (x, y) points -- lines
// (optionally with markers), steps (CDFs), stacked areas (a total split by series; steps,
// as a round's allocation holds for the round) or
// grouped bars (x an integer category). Every chart has a title, both axes labelled with
// their unit, tick labels that do not overlap, a legend naming each series in its colour,
// and no NaN or infinity anywhere: points that are not finite (or not above 0 on a log
// axis) are dropped, and a chart left with no points says "no data" across its frame.
// Marks carry class "mark" (line, area, bar, dot), axes class "axis x" / "axis y", so a
// test can count them. The SVG is well-formed XML (text escaped), needs no script, font
// or file from elsewhere, and is the same bytes for the same chart.
// Thread-safety: pure functions over plain values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sia::plot {

struct Axis {
  Axis() = default;
  Axis(std::string label_, std::string unit_ = "", bool log_ = false)
      : label(std::move(label_)), unit(std::move(unit_)), log(log_) {}

  std::string label;
  std::string unit;  // shown as "label (unit)"; "" for none
  bool log = false;
  std::optional<double> min, max;  // fixed ends (e.g. 0 and 1 for a CDF); else from the data
  bool integer = false;            // counts: ticks at whole numbers only
};

struct Series {
  Series() = default;
  Series(std::string name_, std::vector<std::pair<double, double>> points_ = {},
         std::optional<std::size_t> colour_ = std::nullopt)
      : name(std::move(name_)), points(std::move(points_)), colour(colour_) {}

  std::string name;
  std::vector<std::pair<double, double>> points;
  // Palette index (svg.hpp: colour); default: the series' position. A chart never gives
  // two series one colour: a taken one moves on to the next free index.
  std::optional<std::size_t> colour;
};

enum class Mark {
  line,     // points joined in x order
  step,     // a step function: flat to the next x, then up or down (CDFs)
  stacked,  // areas stacked in series order (a missing x counts 0), from 0, as steps
  bars,     // grouped bars at integer x, from 0
};

struct Chart {
  std::string title;
  Axis x, y;
  Mark mark = Mark::line;
  bool markers = false;  // a dot at each point (line and step charts)
  std::vector<Series> series;
  int width = 640, height = 360;
  std::vector<std::string> categories;  // bars: the label of x = 0, 1, ... ("15+")
};

// The <svg> element (no XML declaration: it is meant to sit inside an HTML page).
std::string render_svg(const Chart& chart);

// "label (unit)", or the label alone.
std::string axis_title(const Axis& axis);

}  // namespace sia::plot
