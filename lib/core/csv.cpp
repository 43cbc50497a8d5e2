#include "core/csv.hpp"

#include <charconv>
#include <cmath>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"

namespace sia {

static std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  for (auto& s : out) {
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t");
    s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  }
  return out;
}

CsvTable::CsvTable(std::string_view text, std::string file, ExitStatus status)
    : file_(std::move(file)), status_(status) {
  text = skip_bom(text);  // as in JSON and TOML (json_limits.hpp)
  std::size_t line_no = 0;
  bool have_header = false;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      if (end >= text.size()) break;
      continue;
    }
    auto cells = split_line(line);
    if (!have_header) {
      header_ = std::move(cells);
      have_header = true;
    } else {
      if (cells.size() != header_.size()) {
        throw Error(status_, file_ + ":" + std::to_string(line_no) + ": expected " +
                                 std::to_string(header_.size()) + " columns, got " +
                                 std::to_string(cells.size()));
      }
      rows_.push_back(std::move(cells));
      lines_.push_back(line_no);
    }
    if (end >= text.size()) break;
  }
  if (!have_header) throw Error(status_, file_ + ": empty file, expected a header row");
}

bool CsvTable::has_column(std::string_view name) const {
  for (const auto& h : header_) {
    if (h == name) return true;
  }
  return false;
}

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  throw Error(status_, file_ + ":1: missing column \"" + std::string(name) + "\"");
}

void CsvTable::fail(std::size_t row, int col, std::string_view what) const {
  throw Error(status_, file_ + ":" + std::to_string(lines_[row]) + ": column " + header_[col] +
                           ": " + std::string(what));
}

double CsvTable::number(std::size_t row, int col) const {
  const std::string& s = rows_[row][col];
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v)) {
    fail(row, col, "expected a number, got \"" + s + "\"");
  }
  return v;
}

long long CsvTable::integer(std::size_t row, int col) const {
  double v = number(row, col);
  if (v != std::floor(v) || std::fabs(v) > 9e15) {
    fail(row, col, "expected an integer, got \"" + rows_[row][col] + "\"");
  }
  return static_cast<long long>(v);
}

CsvTable read_csv(const std::string& file, ExitStatus status) {
  return CsvTable(read_input(file), display_name(file), status);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace sia
