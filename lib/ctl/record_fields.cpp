#include "ctl/record_fields.hpp"

#include <cmath>

namespace sia::ctl {

using nlohmann::json;

std::string str_of(const json& r, const char* k, const std::string& fallback) {
  auto it = r.find(k);
  return it != r.end() && it->is_string() ? it->get<std::string>() : fallback;
}
double num_of(const json& r, const char* k, double fallback) {
  auto it = r.find(k);
  return it != r.end() && it->is_number() ? it->get<double>() : fallback;
}
std::int64_t int_of(const json& r, const char* k, std::int64_t fallback) {
  auto it = r.find(k);
  if (it == r.end() || !it->is_number()) return fallback;
  double v = it->get<double>();
  if (!std::isfinite(v) || std::fabs(v) > kMaxExactInteger) return fallback;
  return static_cast<std::int64_t>(v);
}
bool bool_of(const json& r, const char* k, bool fallback) {
  auto it = r.find(k);
  return it != r.end() && it->is_boolean() ? it->get<bool>() : fallback;
}
std::optional<double> finite(const json& r, const char* k) {
  auto it = r.find(k);
  if (it == r.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}
std::optional<double> in_range(const json& r, const char* k, double lo, double hi) {
  auto v = finite(r, k);
  if (v && *v >= lo && *v <= hi) return v;
  return std::nullopt;
}
const json& arr_of(const json& r, const char* k) {
  static const json empty = json::array();
  auto it = r.find(k);
  return it != r.end() && it->is_array() ? *it : empty;
}

}  // namespace sia::ctl
