#include "cli/table.hpp"

#include "core/time_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace sia::cli {

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {}

void Table::right_align(std::size_t column) {
  if (right_.size() <= column) right_.resize(column + 1, false);
  right_[column] = true;
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

static bool numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == 'x' || c == '%')) {
      return false;
    }
  }
  return std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.';
}

std::string Table::render() const {
  std::vector<std::size_t> w(header_.size());
  for (std::size_t i = 0; i < header_.size(); ++i) w[i] = header_[i].size();
  for (const auto& r : rows_) {
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& r, bool head) {
    std::string l;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string cell = r[i];
      if (head) {
        for (auto& c : cell) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      std::size_t pad = w[i] - cell.size();
      bool right = !head && ((i < right_.size() && right_[i]) || numeric(cell));
      if (i) l += "  ";
      if (right) l.append(pad, ' ');
      l += cell;
      if (!right && i + 1 < r.size()) l.append(pad, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header_, true);
  for (const auto& r : rows_) line(r, false);
  return out;
}

// Beyond this many seconds (about 31.7 million years) a duration or a time is not one a
// person can use, and it would not fit the integers it is printed through.
constexpr double kMaxSeconds = 1e15;

std::string fixed(double v, int digits) {
  char buf[64];
  if (std::isnan(v)) return "-";
  // A number past 1e15 (a worker's 1e300) in fixed point would be hundreds of digits wide.
  if (!(std::fabs(v) < kMaxSeconds)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  }
  return buf;
}

std::string duration(double seconds) {
  char buf[64];
  if (!(std::fabs(seconds) <= kMaxSeconds)) return "-";  // NaN too
  long s = std::lround(seconds);
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldd%02ldh", s / 86400, (s % 86400) / 3600);
  }
  return buf;
}

std::string utc_time(double seconds) {
  return utc_text(seconds);
}

}  // namespace sia::cli
