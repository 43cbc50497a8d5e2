// JsonCursor: a strict one-pass reader of JSON text for the documents on the hot path of a
// round (a GoodputMatrix, a Jobs file, the model catalog), several times faster than
// nlohmann's parser. It is all-or-nothing by design: wherever the text is not JSON as
// RFC 8259 has it, or holds what the cursor does not take on (a \u escape, a number out
// of double range, an escape in a key, nesting deeper than kMaxJsonDepth), it throws
// JsonCursor::Decline and the caller reads the text nlohmann's way instead, whose
// messages are the ones users see. Whatever it does accept, it reads exactly as nlohmann
// does: integers in int64 (negative) or uint64 when they fit, else a double; doubles
// correctly rounded; strings as their UTF-8 bytes.
// Thread-safety: one cursor per thread; parse_json_fast is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/json_limits.hpp"

namespace sia {

class JsonCursor {
 public:
  // Thrown wherever the cursor (or a reader built on it) does not take the text on.
  struct Decline {};
  [[noreturn]] static void decline() { throw Decline{}; }

  // A JSON number as nlohmann keeps it.
  struct Number {
    enum Kind { integer, unsigned_integer, floating } kind = floating;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;

    double as_double() const;     // Node::as_number
    std::int64_t as_int() const;  // Node::as_int; declines where it would throw
  };

  explicit JsonCursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  // The next character after white space (declines at the end).
  char peek() {
    skip_space();
    if (p_ == end_) decline();
    return *p_;
  }
  // Nothing but white space is left.
  bool at_end() {
    skip_space();
    return p_ == end_;
  }

  // {"key": value, ...}: `on_key(key)` reads the value. With `unique`, a key seen twice
  // declines (nlohmann keeps the last one; a reader that acts on keys as they come would
  // not), and so does an object of more than 64 keys.
  template <bool unique = true, class F>
  void object(F&& on_key);
  // [value, ...]: `on_element()` reads each.
  template <class F>
  void array(F&& on_element);

  bool null();  // `null` is consumed and true; anything else is left for the caller
  bool boolean();
  std::string string();
  Number number();
  // Any value, checked and passed over (an object naming a key twice declines); its text.
  std::string_view skip();

 private:
  static constexpr std::size_t kMaxKeys = 64;
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  void expect(char c) {
    if (peek() != c) decline();
    ++p_;
  }
  void enter() {
    if (++depth_ > kMaxJsonDepth) decline();
  }
  // Consumes `open`, and `close` too when nothing is inside: false then.
  bool open_list(char open, char close) {
    expect(open);
    enter();
    if (peek() != close) return true;
    ++p_;
    --depth_;
    return false;
  }
  bool list_continues(char close) {
    char c = peek();
    ++p_;
    if (c == ',') return true;
    if (c != close) decline();
    return false;
  }
  void literal(std::string_view word);
  std::string_view key();
  void utf8_sequence();  // one multi-byte character, RFC 3629 (what nlohmann accepts)

  const char* p_;
  const char* end_;
  int depth_ = 0;
};

template <bool unique, class F>
void JsonCursor::object(F&& on_key) {
  if (!open_list('{', '}')) return;
  std::string_view seen[unique ? kMaxKeys : 1];
  std::size_t n = 0;
  for (;;) {
    std::string_view k = key();
    if constexpr (unique) {
      for (std::size_t i = 0; i < n; ++i) {
        if (seen[i] == k) decline();
      }
      if (n == kMaxKeys) decline();
      seen[n++] = k;
    }
    expect(':');
    on_key(k);
    if (!list_continues('}')) break;
  }
  --depth_;
}

template <class F>
void JsonCursor::array(F&& on_element) {
  if (!open_list('[', ']')) return;
  do {
    on_element();
  } while (list_continues(']'));
  --depth_;
}

// The value nlohmann::json::parse(text) returns, or nullopt where the cursor declines
// (including every text nlohmann refuses, and an object that names a key twice).
std::optional<nlohmann::json> parse_json_fast(std::string_view text);

}  // namespace sia
