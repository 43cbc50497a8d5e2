#include "core/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"

namespace sia {

JsonWriter::JsonWriter(bool pretty) : pretty_(pretty) {
  out_.reserve(1 << 16);
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * stack_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& l = stack_.back();
  if (!l.empty) out_ += ',';
  l.empty = false;
  if (pretty_ && !l.inline_array) newline();
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({false, false, true});
}

void JsonWriter::end_object() {
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (pretty_ && !empty) newline();
  out_ += '}';
}

void JsonWriter::begin_array(bool inline_array) {
  before_value();
  out_ += '[';
  bool parent_inline = !stack_.empty() && stack_.back().inline_array;
  stack_.push_back({true, inline_array || parent_inline, true});
}

void JsonWriter::end_array() {
  Level l = stack_.back();
  stack_.pop_back();
  if (pretty_ && !l.empty && !l.inline_array) newline();
  out_ += ']';
}

static void quote(std::string& out_, std::string_view s) {
  out_ += '"';
  std::size_t plain = 0;  // the start of the characters not yet appended
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) continue;
    out_.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      }
    }
  }
  out_.append(s.data() + plain, s.size() - plain);
  out_ += '"';
}

void JsonWriter::key(std::string_view k) {
  before_value();
  quote(out_, k);
  out_ += pretty_ ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::string(std::string_view s) {
  before_value();
  quote(out_, s);
}

void JsonWriter::number(double d) {
  before_value();
  if (!std::isfinite(d)) {
    throw Error(ExitStatus::software, "refusing to write a non-finite number");
  }
  // nlohmann's own formatting (Grisu2, printf-%g-like layout), so both writers agree.
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
  out_.append(buf, end - buf);
}

void JsonWriter::integer(std::int64_t i) {
  before_value();
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, i);
  out_.append(buf, res.ptr - buf);
}

void JsonWriter::boolean(bool b) {
  before_value();
  out_ += b ? "true" : "false";
}

void JsonWriter::null() {
  before_value();
  out_ += "null";
}

void JsonWriter::raw(const nlohmann::json& value) {
  before_value();
  std::string text = dump_json(value, pretty_);
  if (pretty_ && !stack_.empty()) {
    // Re-indent the nested document to the current depth.
    std::string pad = "\n" + std::string(2 * stack_.size(), ' ');
    std::string indented;
    for (char c : text) {
      if (c == '\n') {
        indented += pad;
      } else {
        indented += c;
      }
    }
    out_ += indented;
  } else {
    out_ += text;
  }
}

}  // namespace sia
