#include "core/time_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace sia {

namespace {

bool all_digits(std::string::const_iterator b, std::string::const_iterator e) {
  return b != e && std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<double> duration_seconds(const std::string& text) {
  if (text.size() < 2 || text.size() > 12) return std::nullopt;
  const char unit = text.back();
  if (std::string("smhd").find(unit) == std::string::npos) return std::nullopt;
  if (!all_digits(text.begin(), text.end() - 1)) return std::nullopt;
  const double n = std::stod(text.substr(0, text.size() - 1));
  const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
  return n * scale;
}

std::optional<double> utc_seconds(const std::string& text) {
  if (text.size() < 10 || text.size() > 20) return std::nullopt;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char tail[4] = {0};
  const int n =
      std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%3s", &y, &mo, &d, &h, &mi, &sec, tail);
  const bool date_only = n == 3 && text.size() == 10;
  const bool minutes = n == 5 && (text.size() == 16 || (text.size() == 17 && text.back() == 'Z'));
  const bool seconds =
      (n == 6 && text.size() == 19) || (n == 7 && std::string(tail) == "Z" && text.size() == 20);
  if (!date_only && !minutes && !seconds) return std::nullopt;
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      sec > 60 || h < 0 || mi < 0 || sec < 0) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = date_only ? 0 : h;
  tm.tm_min = date_only ? 0 : mi;
  tm.tm_sec = seconds ? sec : 0;
  return static_cast<double>(::timegm(&tm));
}

std::string utc_text(double seconds) {
  char buf[32] = "-";
  if (!(std::fabs(seconds) <= 1e15)) return buf;  // NaN too
  const auto t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  if (::gmtime_r(&t, &tm)) {
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  }
  return buf;
}

}  // namespace sia
