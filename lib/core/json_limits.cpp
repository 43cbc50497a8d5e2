#include "core/json_limits.hpp"

namespace sia {

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

nlohmann::json parse_json_bounded(std::string_view text) {
  if (!json_depth_ok(text)) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
}

}  // namespace sia
