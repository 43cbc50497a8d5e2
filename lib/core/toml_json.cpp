#include "core/toml_json.hpp"

#include <sstream>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"

namespace sia {

using nlohmann::json;

// Tables and arrays nested deeper than kMaxJsonDepth are refused, as in JSON (json_limits.hpp).
struct TooDeep {};

static json convert(const toml::node& node, int depth) {
  if ((node.is_table() || node.is_array()) && depth >= kMaxJsonDepth) throw TooDeep{};
  if (auto* t = node.as_table()) {
    json out = json::object();
    for (auto&& [k, v] : *t) out[std::string(k.str())] = convert(v, depth + 1);
    return out;
  }
  if (auto* a = node.as_array()) {
    json out = json::array();
    for (auto&& v : *a) out.push_back(convert(v, depth + 1));
    return out;
  }
  if (auto* v = node.as_integer()) return json(v->get());
  if (auto* v = node.as_floating_point()) return json(v->get());
  if (auto* v = node.as_boolean()) return json(v->get());
  if (auto* v = node.as_string()) return json(v->get());
  std::ostringstream ss;
  if (auto* v = node.as_date()) ss << v->get();
  if (auto* v = node.as_time()) ss << v->get();
  if (auto* v = node.as_date_time()) ss << v->get();
  return json(ss.str());
}

json toml_to_json(std::string_view text, const std::string& file, ExitStatus status) {
  try {
    toml::table table = toml::parse(skip_bom(text), file);
    return convert(table, 0);
  } catch (const TooDeep&) {
    throw Error(status, file + ": invalid TOML: nested more than " + std::to_string(kMaxJsonDepth) +
                            " levels deep");
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw Error(status, file + ":" + std::to_string(where.line) + ":" +
                            std::to_string(where.column) +
                            ": invalid TOML: " + std::string(e.description()));
  }
}

}  // namespace sia
