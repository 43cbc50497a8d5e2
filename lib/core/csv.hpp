// A small reader for the comma-separated files sia consumes (the published artifact's
// traces and workloads): a header row, then data rows read by column name. No quoting of
// separators is needed by those files; quoted fields are still unquoted. Errors name the
// file, the line and the column.
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/exit_status.hpp"

namespace sia {

class CsvTable {
 public:
  // Parses `text`; `file` is used in messages.
  CsvTable(std::string_view text, std::string file, ExitStatus status = ExitStatus::data);

  const std::vector<std::string>& header() const { return header_; }
  std::size_t rows() const { return rows_.size(); }
  bool has_column(std::string_view name) const;
  int column(std::string_view name) const;  // throws if absent

  const std::string& cell(std::size_t row, int col) const { return rows_[row][col]; }
  double number(std::size_t row, int col) const;  // finite, else throws with line/column
  long long integer(std::size_t row, int col) const;
  std::size_t line_of(std::size_t row) const { return lines_[row]; }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(std::size_t row, int col, std::string_view what) const;

 private:
  std::string file_;
  ExitStatus status_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

CsvTable read_csv(const std::string& file, ExitStatus status = ExitStatus::data);

// One field of a CSV row as RFC 4180 writes it: quoted (quotes doubled) when it holds a
// comma, a quote or a line break.
std::string csv_field(std::string_view text);

}  // namespace sia
