// Node: a read-only view of one value inside a parsed JSON (or TOML-converted) document
// that knows where it is. Every accessor that finds the wrong type or a missing field
// throws sia::Error with "file: path: expected ..., got ...", so validators read like the
// schema they check and never forget to say which field was wrong.
// Thread-safety: a Node is a cheap value; the document it views must outlive it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/exit_status.hpp"

namespace sia {

// " (did you mean \"max_gpus\"?)" for the known word nearest to `word` (an edit distance of
// at most a third of its length, and at least 1), or "" when none is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known);

class Node {
 public:
  Node(const nlohmann::json& value, std::string file, std::string path,
       ExitStatus status = ExitStatus::data);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  ExitStatus status() const { return status_; }
  const nlohmann::json& json() const { return *value_; }

  bool is_null() const;
  bool is_object() const;
  bool is_array() const;
  bool is_string() const;
  bool is_number() const;

  // Objects.
  bool has(std::string_view key) const;                 // present and not null
  Node at(std::string_view key) const;                  // required field
  std::optional<Node> get(std::string_view key) const;  // absent or null -> nullopt
  std::vector<std::string> keys() const;                // in key order

  // Refuses a key not in `known`: "file: path.key: unknown key \"max_gpu\" (did you mean
  // \"max_gpus\"?)". For documents people write, where a typo must not be dropped silently.
  void only_keys(std::initializer_list<std::string_view> known) const;

  // Arrays (also reject non-arrays with a clear message).
  std::size_t size() const;
  Node operator[](std::size_t i) const;
  void each(const std::function<void(const Node&)>& fn) const;

  // Scalars.
  std::string as_string() const;
  double as_number() const;     // finite
  std::int64_t as_int() const;  // an integer (a float with an integral value is accepted)
  bool as_bool() const;
  std::vector<std::string> as_strings() const;

  // Optional fields with defaults.
  std::string string_or(std::string_view key, std::string_view fallback) const;
  double number_or(std::string_view key, double fallback) const;
  std::int64_t int_or(std::string_view key, std::int64_t fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;

  // Checked scalars.
  double positive_number() const;         // > 0
  double non_negative_number() const;     // >= 0
  std::int64_t positive_int() const;      // >= 1
  std::int64_t non_negative_int() const;  // >= 0
  std::string one_of(std::initializer_list<std::string_view> choices) const;

  // Ranges, inclusive: "expected an integer from 1 to 1000000, got the number 4294967297".
  std::int64_t int_in(std::int64_t lo, std::int64_t hi) const;
  double number_in(double lo, double hi) const;
  // For fields kept in an int: the checks above, and never above 2147483647 (no wrap).
  int positive_int32() const;
  int non_negative_int32() const;
  int int32() const;
  int int32_or(std::string_view key, int fallback) const;

  [[noreturn]] void fail(std::string_view what) const;
  [[noreturn]] void expected(std::string_view what) const;  // "expected <what>, got <this>"
  std::string describe() const;  // "a string \"x\"", "the number 3", "an object", ...

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
  ExitStatus status_;
};

}  // namespace sia
