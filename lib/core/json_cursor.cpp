#include "core/json_cursor.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace sia {

double JsonCursor::Number::as_double() const {
  return kind == integer            ? static_cast<double>(i)
         : kind == unsigned_integer ? static_cast<double>(u)
                                    : d;
}

std::int64_t JsonCursor::Number::as_int() const {
  if (kind == integer) return i;
  if (kind == unsigned_integer) {
    if (u > static_cast<std::uint64_t>(INT64_MAX)) decline();
    return static_cast<std::int64_t>(u);
  }
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
    return static_cast<std::int64_t>(d);
  }
  decline();
}

namespace {
bool digit(char c) {
  return c >= '0' && c <= '9';
}
// Passes over the plain bytes of a string: no quote, backslash, control or non-ASCII byte.
bool plain(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
}
}  // namespace

bool JsonCursor::null() {
  if (peek() != 'n') return false;
  literal("null");
  return true;
}

bool JsonCursor::boolean() {
  if (peek() == 't') {
    literal("true");
    return true;
  }
  literal("false");
  return false;
}

void JsonCursor::literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() ||
      std::string_view(p_, word.size()) != word) {
    decline();
  }
  p_ += word.size();
}

std::string_view JsonCursor::key() {
  expect('"');
  const char* start = p_;
  while (p_ < end_ && plain(*p_)) ++p_;
  if (p_ == end_ || *p_ != '"') decline();
  return std::string_view(start, static_cast<std::size_t>(p_++ - start));
}

void JsonCursor::utf8_sequence() {
  const auto b0 = static_cast<unsigned char>(*p_);
  int more = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    more = 1;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    more = 2;
    if (b0 == 0xe0) lo = 0xa0;
    if (b0 == 0xed) hi = 0x9f;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    more = 3;
    if (b0 == 0xf0) lo = 0x90;
    if (b0 == 0xf4) hi = 0x8f;
  } else {
    decline();
  }
  if (end_ - p_ <= more) decline();
  for (int k = 1; k <= more; ++k) {
    const auto b = static_cast<unsigned char>(p_[k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xbf)) decline();
  }
  p_ += more + 1;
}

std::string JsonCursor::string() {
  expect('"');
  std::string out;
  for (;;) {
    const char* run = p_;
    while (p_ < end_ && plain(*p_)) ++p_;
    out.append(run, p_);
    if (p_ == end_) decline();
    const auto c = static_cast<unsigned char>(*p_);
    if (c >= 0x80) {
      const char* start = p_;
      utf8_sequence();
      out.append(start, p_);
      continue;
    }
    ++p_;
    if (c == '"') return out;
    if (c != '\\' || p_ == end_) decline();  // a control character, or a lone backslash
    switch (*p_++) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      default:  // \u, or not an escape
        decline();
    }
  }
}

JsonCursor::Number JsonCursor::number() {
  peek();
  const char* start = p_;
  bool negative = false;
  if (*p_ == '-') {
    negative = true;
    ++p_;
  }
  const char* int_start = p_;
  if (p_ == end_ || !digit(*p_)) decline();
  if (*p_ == '0') {
    ++p_;
  } else {
    while (p_ < end_ && digit(*p_)) ++p_;
  }
  bool integral = true;
  if (p_ < end_ && *p_ == '.') {
    integral = false;
    ++p_;
    if (p_ == end_ || !digit(*p_)) decline();
    while (p_ < end_ && digit(*p_)) ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    integral = false;
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !digit(*p_)) decline();
    while (p_ < end_ && digit(*p_)) ++p_;
  }
  Number n;
  if (integral) {
    if (negative) {
      auto r = std::from_chars(start, p_, n.i);
      if (r.ec == std::errc() && r.ptr == p_) {
        n.kind = Number::integer;
        return n;
      }
    } else {
      auto r = std::from_chars(int_start, p_, n.u);
      if (r.ec == std::errc() && r.ptr == p_) {
        n.kind = Number::unsigned_integer;
        return n;
      }
    }
  }
  // Out of range (underflow too) declines: nlohmann has its own word for overflow.
  auto r = std::from_chars(start, p_, n.d);
  if (r.ec != std::errc() || r.ptr != p_ || !std::isfinite(n.d)) decline();
  n.kind = Number::floating;
  return n;
}

std::string_view JsonCursor::skip() {
  const char* start = (peek(), p_);
  switch (*p_) {
    case '{': {
      // A key named twice declines here too, however many keys the object has.
      std::vector<std::string_view> keys;
      object<false>([&](std::string_view k) {
        keys.push_back(k);
        skip();
      });
      std::sort(keys.begin(), keys.end());
      if (std::adjacent_find(keys.begin(), keys.end()) != keys.end()) decline();
      break;
    }
    case '[':
      array([&] { skip(); });
      break;
    case '"':
      string();
      break;
    case 't':
    case 'f':
      boolean();
      break;
    case 'n':
      literal("null");
      break;
    default:
      number();
  }
  return std::string_view(start, static_cast<std::size_t>(p_ - start));
}

namespace {
nlohmann::json tree(JsonCursor& c) {
  using nlohmann::json;
  switch (c.peek()) {
    case '{': {
      json j = json::object();
      auto& members = j.get_ref<json::object_t&>();
      // A key named twice declines: sia refuses it (json_limits.hpp), with nlohmann's help.
      c.object<false>([&](std::string_view k) {
        auto [it, fresh] = members.emplace(std::string(k), nullptr);
        if (!fresh) JsonCursor::decline();
        it->second = tree(c);
      });
      return j;
    }
    case '[': {
      json j = json::array();
      auto& elements = j.get_ref<json::array_t&>();
      c.array([&] { elements.push_back(tree(c)); });
      return j;
    }
    case '"':
      return json(c.string());
    case 't':
    case 'f':
      return json(c.boolean());
    case 'n':
      c.null();
      return json();
    default: {
      const JsonCursor::Number n = c.number();
      if (n.kind == JsonCursor::Number::integer) return json(n.i);
      if (n.kind == JsonCursor::Number::unsigned_integer) return json(n.u);
      return json(n.d);
    }
  }
}
}  // namespace

std::optional<nlohmann::json> parse_json_fast(std::string_view text) {
  try {
    JsonCursor c(text);
    nlohmann::json value = tree(c);
    if (!c.at_end()) return std::nullopt;
    return value;
  } catch (const JsonCursor::Decline&) {
    return std::nullopt;
  }
}

}  // namespace sia
