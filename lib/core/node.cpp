#include "core/node.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sia {

Node::Node(const nlohmann::json& value, std::string file, std::string path, ExitStatus status)
    : value_(&value), file_(std::move(file)), path_(std::move(path)), status_(status) {}

bool Node::is_null() const {
  return value_->is_null();
}
bool Node::is_object() const {
  return value_->is_object();
}
bool Node::is_array() const {
  return value_->is_array();
}
bool Node::is_string() const {
  return value_->is_string();
}
bool Node::is_number() const {
  return value_->is_number();
}

void Node::fail(std::string_view what) const {
  throw Error(status_, located(file_, path_, what));
}

std::string Node::describe() const {
  const auto& v = *value_;
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "the string \"" + s + "\"";
    }
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "the number " + v.dump();
    default:
      return "a value of another type";
  }
}

void Node::expected(std::string_view what) const {
  fail("expected " + std::string(what) + ", got " + describe());
}

static std::string child_path(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

bool Node::has(std::string_view key) const {
  if (!value_->is_object()) return false;
  auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

Node Node::at(std::string_view key) const {
  if (!value_->is_object()) expected("an object");
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) {
    throw Error(status_, located(file_, child_path(path_, key), "missing required field"));
  }
  return Node(*it, file_, child_path(path_, key), status_);
}

std::optional<Node> Node::get(std::string_view key) const {
  if (!value_->is_object()) expected("an object");
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return Node(*it, file_, child_path(path_, key), status_);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known) {
  // Levenshtein distance, one row at a time.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  std::string_view best;
  std::size_t best_d = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (auto k : known) {
    std::size_t d = distance(word, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  if (best.empty()) return "";
  return " (did you mean \"" + std::string(best) + "\"?)";
}

void Node::only_keys(std::initializer_list<std::string_view> known) const {
  if (!value_->is_object()) return;
  std::vector<std::string_view> list(known);
  std::string lines;  // every unknown key, one a line
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(list.begin(), list.end(), it.key()) != list.end()) continue;
    lines += (lines.empty() ? "" : "\n") +
             located(file_, child_path(path_, it.key()),
                     "unknown key \"" + it.key() + "\"" + did_you_mean(it.key(), list));
  }
  if (!lines.empty()) throw Error(status_, lines);
}

std::vector<std::string> Node::keys() const {
  if (!value_->is_object()) expected("an object");
  std::vector<std::string> out;
  for (auto it = value_->begin(); it != value_->end(); ++it) out.push_back(it.key());
  return out;
}

std::size_t Node::size() const {
  if (!value_->is_array()) expected("an array");
  return value_->size();
}

Node Node::operator[](std::size_t i) const {
  if (!value_->is_array()) expected("an array");
  if (i >= value_->size()) expected("an array of at least " + std::to_string(i + 1) + " elements");
  return Node((*value_)[i], file_, path_ + "[" + std::to_string(i) + "]", status_);
}

void Node::each(const std::function<void(const Node&)>& fn) const {
  const std::size_t n = size();
  // One child, its value and index changed in place: a table of 100,000 numbers is not
  // 100,000 copies of the file name and path (a callback that keeps a Node copies it).
  Node child(*value_, file_, path_ + "[", status_);
  const std::size_t base = child.path_.size();
  char digits[24];
  for (std::size_t i = 0; i < n; ++i) {
    child.value_ = &(*value_)[i];
    child.path_.resize(base);
    child.path_.append(digits, std::to_chars(digits, digits + sizeof digits, i).ptr);
    child.path_ += ']';
    fn(child);
  }
}

std::string Node::as_string() const {
  if (!value_->is_string()) expected("a string");
  return value_->get<std::string>();
}

double Node::as_number() const {
  if (!value_->is_number()) expected("a number");
  double d = value_->get<double>();
  if (!std::isfinite(d)) expected("a finite number");
  return d;
}

std::int64_t Node::as_int() const {
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() &&
        value_->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      expected("an integer that fits in 64 bits");
    }
    return value_->get<std::int64_t>();
  }
  if (value_->is_number_float()) {
    double d = value_->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  expected("an integer");
}

bool Node::as_bool() const {
  if (!value_->is_boolean()) expected("true or false");
  return value_->get<bool>();
}

std::vector<std::string> Node::as_strings() const {
  std::vector<std::string> out;
  each([&](const Node& n) { out.push_back(n.as_string()); });
  return out;
}

std::string Node::string_or(std::string_view key, std::string_view fallback) const {
  auto n = get(key);
  return n ? n->as_string() : std::string(fallback);
}

double Node::number_or(std::string_view key, double fallback) const {
  auto n = get(key);
  return n ? n->as_number() : fallback;
}

std::int64_t Node::int_or(std::string_view key, std::int64_t fallback) const {
  auto n = get(key);
  return n ? n->as_int() : fallback;
}

bool Node::bool_or(std::string_view key, bool fallback) const {
  auto n = get(key);
  return n ? n->as_bool() : fallback;
}

double Node::positive_number() const {
  double d = as_number();
  if (!(d > 0)) expected("a positive number");
  return d;
}

double Node::non_negative_number() const {
  double d = as_number();
  if (d < 0) expected("a number >= 0");
  return d;
}

std::int64_t Node::positive_int() const {
  if (!value_->is_number()) expected("a positive integer");
  std::int64_t v = as_int();
  if (v < 1) expected("a positive integer");
  return v;
}

std::int64_t Node::non_negative_int() const {
  if (!value_->is_number()) expected("an integer >= 0");
  std::int64_t v = as_int();
  if (v < 0) expected("an integer >= 0");
  return v;
}

std::int64_t Node::int_in(std::int64_t lo, std::int64_t hi) const {
  const std::string want = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!value_->is_number()) expected(want);
  if (value_->is_number_float()) {
    double d = value_->get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) ||
        d > static_cast<double>(hi)) {
      expected(want);
    }
  } else if (value_->is_number_unsigned()) {
    if (value_->get<std::uint64_t>() > static_cast<std::uint64_t>(hi < 0 ? 0 : hi)) expected(want);
  }
  std::int64_t v = as_int();
  if (v < lo || v > hi) expected(want);
  return v;
}

int Node::positive_int32() const {
  std::int64_t v = positive_int();
  if (v > INT32_MAX) expected("a positive integer at most 2147483647");
  return static_cast<int>(v);
}

int Node::non_negative_int32() const {
  std::int64_t v = non_negative_int();
  if (v > INT32_MAX) expected("an integer from 0 to 2147483647");
  return static_cast<int>(v);
}

int Node::int32() const {
  std::int64_t v = as_int();
  if (v < INT32_MIN || v > INT32_MAX) expected("an integer from -2147483648 to 2147483647");
  return static_cast<int>(v);
}

int Node::int32_or(std::string_view key, int fallback) const {
  auto n = get(key);
  return n ? n->int32() : fallback;
}

double Node::number_in(double lo, double hi) const {
  auto text = [](double x) {  // "1000000000", "0.001"
    char buf[32];
    if (x == std::floor(x) && std::fabs(x) < 1e15) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
    } else {
      std::snprintf(buf, sizeof buf, "%g", x);
    }
    return std::string(buf);
  };
  const std::string want = "a number from " + text(lo) + " to " + text(hi);
  if (!value_->is_number()) expected(want);
  double d = value_->get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) expected(want);
  return d;
}

std::string Node::one_of(std::initializer_list<std::string_view> choices) const {
  std::string list;
  for (auto c : choices) {
    if (!list.empty()) list += ", ";
    list += "\"" + std::string(c) + "\"";
  }
  if (!value_->is_string()) expected("one of " + list);
  std::string s = value_->get<std::string>();
  for (auto c : choices) {
    if (s == c) return s;
  }
  expected("one of " + list);
}

}  // namespace sia
