#include "core/json_limits.hpp"

#include <memory>
#include <set>
#include <vector>

#include "core/json_cursor.hpp"

namespace sia {

using nlohmann::json;

std::string_view skip_bom(std::string_view text) {
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.remove_prefix(3);
  return text;
}

namespace {

struct DuplicateKey {
  std::string key;
  std::string where;  // the object's path, "" for the top
};

// nlohmann's parser callback that throws DuplicateKey at a key an object already has. It
// keeps, per open object or array, the keys seen or the element's index, for the path.
class UniqueKeys {
 public:
  bool operator()(int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames_.push_back({true, {}, {}, 0});
        break;
      case json::parse_event_t::array_start:
        frames_.push_back({false, {}, {}, 0});
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        std::string k = parsed.get<std::string>();
        if (!f.keys.insert(k).second) throw DuplicateKey{std::move(k), path()};
        f.key = std::move(k);
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        element_done();
        break;
      case json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;    // the member being read
    std::size_t index;  // the element being read
  };
  void element_done() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }
  // The path of the innermost open object: its parents' members and elements.
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      if (frames_[i].object) {
        if (!p.empty()) p += '.';
        p += frames_[i].key;
      } else {
        p += "[" + std::to_string(frames_[i].index) + "]";
      }
    }
    return p;
  }
  std::vector<Frame> frames_;
};

std::string after(const std::string& what, const char* from) {
  auto pos = what.find(from);
  return pos == std::string::npos ? what : what.substr(pos);
}

}  // namespace

bool json_depth_ok(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

JsonParse parse_json_checked(std::string_view text) {
  text = skip_bom(text);
  JsonParse r;
  // The fast reader first: it declines duplicate keys, deep nesting and whatever it does
  // not take on; nlohmann's, with the key check, for the rest and for the messages.
  if (auto fast = parse_json_fast(text)) {
    r.value = std::move(*fast);
    return r;
  }
  r.value = json(json::value_t::discarded);
  if (!json_depth_ok(text)) {
    r.error = "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep";
    return r;
  }
  auto unique = std::make_shared<UniqueKeys>();
  try {
    r.value = json::parse(text.begin(), text.end(),
                          [unique](int depth, json::parse_event_t event, json& parsed) {
                            return (*unique)(depth, event, parsed);
                          });
  } catch (const DuplicateKey& d) {
    r.value = json(json::value_t::discarded);
    r.error = "duplicate key \"" + d.key + "\"" + (d.where.empty() ? "" : " in " + d.where);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    r.error = "invalid JSON: " + after(e.what(), "parse error");
    r.syntax = true;
  } catch (const json::out_of_range& e) {
    // A number too large for a double ("1e400").
    r.error = "invalid JSON: " + after(e.what(), "number overflow");
  }
  return r;
}

json parse_json_bounded(std::string_view text) {
  return parse_json_checked(text).value;
}

}  // namespace sia
