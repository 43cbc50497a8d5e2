#include "plot/page.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "os/atomic_file.hpp"
#include "plot/svg.hpp"

namespace sia::plot {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px}"
    "p{margin:4px 0;max-width:60em}"
    ".charts{display:flex;flex-wrap:wrap;gap:16px;margin-top:8px}"
    ".charts svg{border:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0;font-size:14px}"
    "th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
    "th:first-child,td:first-child{text-align:left}";

}  // namespace

std::string render_html(const Page& page) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n<title>" +
      escape(page.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" +
      escape(page.title) + "</h1>\n";
  for (const auto& n : page.notes) h += "<p>" + escape(n) + "</p>\n";
  for (const auto& sec : page.sections) {
    h += "<section>\n";
    if (!sec.heading.empty()) h += "<h2>" + escape(sec.heading) + "</h2>\n";
    for (const auto& n : sec.notes) h += "<p>" + escape(n) + "</p>\n";
    for (const auto& t : sec.tables) {
      h += "<table>\n<tr>";
      for (const auto& c : t.header) h += "<th>" + escape(c) + "</th>";
      h += "</tr>\n";
      for (const auto& r : t.rows) {
        h += "<tr>";
        for (const auto& c : r) h += "<td>" + escape(c) + "</td>";
        h += "</tr>\n";
      }
      h += "</table>\n";
    }
    if (!sec.charts.empty()) {
      h += "<div class=\"charts\">\n";
      for (const auto& c : sec.charts) h += c + "\n";
      h += "</div>\n";
    }
    h += "</section>\n";
  }
  h += "</body>\n</html>\n";
  return h;
}

void write_page(const std::string& path, const std::string& html) {
  if (!path.empty() && path != "-") {
    os::write_file_atomic(path, html, os::kPublicFile);
    return;
  }
  if (std::fwrite(html.data(), 1, html.size(), stdout) != html.size() || std::fflush(stdout) != 0) {
    if (errno == EPIPE) return;  // the reader went away: not an error (conventions)
    throw Error(ExitStatus::io, std::string("<stdout>: ") + std::strerror(errno));
  }
}

}  // namespace sia::plot
