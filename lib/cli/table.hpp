// A plain text table for people: left-aligned columns separated by two spaces, numbers
// right-aligned, an upper-case header. No colour unless asked.
// Thread-safety: plain value.
#pragma once

#include <string>
#include <vector>

namespace sia::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header);
  void add(std::vector<std::string> row);
  void right_align(std::size_t column);  // always, whatever the cells look like
  std::string render() const;
  std::size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
};

// Fixed-point with `digits` decimals, trimming nothing ("1.50"); from 1e15 in magnitude in
// three significant digits ("1e+300"), NaN as "-".
std::string fixed(double v, int digits);
// Human duration: "42s", "3m20s", "2h05m", "1d03h"; "-" for NaN or beyond 10^15 s.
std::string duration(double seconds);
// A time (seconds since the epoch) in UTC, ISO 8601: "2026-12-01T16:04:59Z"; "-" for NaN,
// beyond 10^15 s or what gmtime cannot convert.
std::string utc_time(double seconds);

}  // namespace sia::cli
