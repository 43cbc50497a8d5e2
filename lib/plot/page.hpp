// Page: one self-contained HTML file of sections, each a heading, a few lines of text, an
// optional table and charts (inline SVG from render_svg). Nothing is loaded from
// elsewhere: no script, no font, no image; a Content-Security-Policy says so to the
// browser. The same page is the same bytes.
// write_page() writes it atomically to a file, or to stdout for "" or "-".
// Thread-safety: pure functions; write_page as write_file_atomic (distinct paths).
#pragma once

#include <string>
#include <vector>

namespace sia::plot {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct Section {
  std::string heading;             // "": none
  std::vector<std::string> notes;  // paragraphs of plain text
  std::vector<Table> tables;
  std::vector<std::string> charts;  // <svg> elements
};

struct Page {
  std::string title;
  std::vector<std::string> notes;
  std::vector<Section> sections;
};

std::string render_html(const Page& page);

// Status 73 (or 74) naming the path when it cannot be written.
void write_page(const std::string& path, const std::string& html);

}  // namespace sia::plot
