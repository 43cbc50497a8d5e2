#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "plot/chart.hpp"
#include "plot/page.hpp"
#include "plot/svg.hpp"

using namespace sia::plot;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

Chart two_lines() {
  Chart c;
  c.title = "Runtime & <scale>";
  c.x = {"GPUs", "", false};
  c.y = {"policy runtime", "s", true};
  c.markers = true;
  c.series = {{"sia", {{1, 0.01}, {2, 0.1}, {4, 1}}}, {"gavel", {{1, 0.02}, {4, 3}}}};
  return c;
}

}  // namespace

TEST_CASE("escaping makes any text safe in XML", "[plot][svg]") {
  CHECK(escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(escape(std::string("x\x01y")) == "x y");
  CHECK(px(12.04) == "12");
  CHECK(px(-0.01) == "0");
  CHECK(px(NAN) == "0");
  CHECK(colour(0) != colour(1));
}

TEST_CASE("no two series of a chart share a colour, however many there are", "[plot][svg]") {
  std::set<std::string> seen;
  for (std::size_t i = 10; i < 4106; ++i) {
    const std::string c = colour(i);
    CHECK(std::regex_match(c, std::regex("#[0-9a-f]{6}")));
    seen.insert(c);
  }
  CHECK(seen.size() == 4096);
  for (std::size_t i = 0; i < 10; ++i) seen.insert(colour(i));
  CHECK(seen.size() == 4106);  // the palette's ten differ from them too
  // Two series asking for one index: the second moves on; the same chart, the same colours.
  const auto c = distinct_colours({0, 0, std::nullopt, 1});
  CHECK(c == std::vector<std::string>{colour(0), colour(1), colour(2), colour(3)});
  // A live timeline of 25 jobs: 25 colours in its marks.
  Chart chart;
  chart.title = "GPUs held per job";
  chart.mark = Mark::stacked;
  for (int j = 0; j < 25; ++j)
    chart.series.push_back({"job" + std::to_string(j), {{1, 1}, {2, 1}}});
  const std::string svg = render_svg(chart);
  std::set<std::string> fills;
  const std::regex fill("class=\"mark[^\"]*\"[^>]*fill=\"(#[0-9a-f]{6})\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), fill), end; it != end; ++it) {
    fills.insert((*it)[1]);
  }
  CHECK(fills.size() == 25);
  CHECK(render_svg(chart) == svg);
}

TEST_CASE("a line chart has its title, axes, legend and marks", "[plot][chart]") {
  const std::string s = render_svg(two_lines());
  CHECK(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\"", 0) == 0);
  CHECK(s.find("Runtime &amp; &lt;scale&gt;") != std::string::npos);
  CHECK(s.find("class=\"axis x\"") != std::string::npos);
  CHECK(s.find("class=\"axis y\"") != std::string::npos);
  CHECK(s.find("policy runtime (s)") != std::string::npos);
  CHECK(s.find(">GPUs<") != std::string::npos);
  CHECK(count(s, "class=\"mark line\"") == 2);
  CHECK(count(s, "class=\"mark dot\"") == 5);
  CHECK(s.find("class=\"legend\"") != std::string::npos);
  CHECK(s.find(">gavel<") != std::string::npos);
  CHECK(s.find("nan") == std::string::npos);
  CHECK(s.find("inf") == std::string::npos);
  CHECK(render_svg(two_lines()) == s);  // the same bytes
}

TEST_CASE("points that cannot be drawn are dropped; none left says no data", "[plot][chart]") {
  Chart c = two_lines();
  c.series = {{"bad", {{NAN, 1}, {1, INFINITY}, {2, 0}, {3, -1}}}};  // 0 and -1 on a log y axis
  const std::string s = render_svg(c);
  CHECK(s.find("no data") != std::string::npos);
  CHECK(s.find("class=\"mark") == std::string::npos);
  CHECK(s.find("nan") == std::string::npos);
  Chart empty;
  empty.title = "empty";
  CHECK(render_svg(empty).find("no data") != std::string::npos);
}

TEST_CASE("stacked areas stack, bars group", "[plot][chart]") {
  Chart c;
  c.title = "held";
  c.mark = Mark::stacked;
  c.series = {{"t4", {{0, 2}, {1, 4}}}, {"a100", {{1, 8}}}};
  const std::string s = render_svg(c);
  CHECK(count(s, "class=\"mark area\"") == 2);
  // The y axis reaches the total (12), not one series' top.
  CHECK(s.find(">12<") != std::string::npos);
  Chart b;
  b.title = "restarts";
  b.mark = Mark::bars;
  b.series = {{"sia", {{0, 3}, {1, 2}}}, {"themis", {{0, 5}}}};
  CHECK(count(render_svg(b), "class=\"mark bar\"") == 3);
  b.categories = {"0", "1+"};  // bars may name their categories
  CHECK(render_svg(b).find(">1+<") != std::string::npos);
}

TEST_CASE("coordinates are plain numbers", "[plot][chart]") {
  Chart c = two_lines();
  c.series[0].points.push_back({1e300, 1e-300});
  const std::string s = render_svg(c);
  std::regex coord(R"re( (x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)")re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), coord); it != std::sregex_iterator();
       ++it) {
    INFO((*it)[0].str());
    CHECK(std::regex_match((*it)[2].str(), std::regex(R"re(-?[0-9]+(\.[0-9])?)re")));
  }
}

TEST_CASE("a page holds its sections and nothing from elsewhere", "[plot][page]") {
  Page p;
  p.title = "R&D";
  p.sections.push_back({"Jobs", {"a <note>"}, {{{"policy", "x"}, {{"sia", "1"}}}}, {"<svg/>"}});
  const std::string h = render_html(p);
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(h.find("<title>R&amp;D</title>") != std::string::npos);
  CHECK(h.find("a &lt;note&gt;") != std::string::npos);
  CHECK(h.find("<td>sia</td>") != std::string::npos);
  CHECK(h.find("<svg/>") != std::string::npos);
  CHECK(h.find("default-src 'none'") != std::string::npos);
  CHECK(h.find("<script") == std::string::npos);
  CHECK(h.find("http://") == std::string::npos);
}
