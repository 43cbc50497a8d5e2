// ErrorList: the errors of one document (or of several files) gathered, so that one run
// reports every mistake, each on its own line, as a compiler does -- not one per attempt.
// A message of several lines is printed by the tools with "<program>: error: " before each
// line (cli/tool.hpp). Thread-safety: a plain value, for one thread.
#pragma once

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace sia {

// A message of several lines (an ErrorList's) as one: its lines joined with "; " (for a
// table's cell, a record's reason).
std::string one_line(std::string_view message);

class ErrorList {
 public:
  // Runs `fn`; a sia::Error it throws is kept (its lines, each once) and swallowed.
  // Returns whether `fn` succeeded.
  template <class F>
  bool check(F&& fn) {
    try {
      fn();
      return true;
    } catch (const Error& e) {
      add(e);
      return false;
    }
  }
  void add(const Error& e);
  bool empty() const { return lines_.empty(); }
  // Throws one Error holding every line, with the first error's status; nothing if empty.
  void throw_if_any() const;

 private:
  std::string lines_;
  ExitStatus status_ = ExitStatus::data;
};

}  // namespace sia
