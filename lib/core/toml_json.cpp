#include "core/toml_json.hpp"

#include <sstream>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sia {

using nlohmann::json;

static json convert(const toml::node& node) {
  if (auto* t = node.as_table()) {
    json out = json::object();
    for (auto&& [k, v] : *t) out[std::string(k.str())] = convert(v);
    return out;
  }
  if (auto* a = node.as_array()) {
    json out = json::array();
    for (auto&& v : *a) out.push_back(convert(v));
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
    toml::table table = toml::parse(text, file);
    return convert(table);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw Error(status, file + ":" + std::to_string(where.line) + ":" +
                            std::to_string(where.column) +
                            ": invalid TOML: " + std::string(e.description()));
  }
}

}  // namespace sia
