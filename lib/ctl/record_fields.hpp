// Lenient readers of one field of a journal record or report (JSON from the journal, a
// snapshot or a peer): a field that is missing or of another type reads as the fallback,
// never as an exception, so one odd record cannot stop a replay.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace sia::ctl {

// The largest magnitude read as an integer (counts, offsets, steps): integers a double
// holds exactly, far beyond any real count, and no overflow into the int64 it becomes.
constexpr double kMaxExactInteger = 9e15;

std::string str_of(const nlohmann::json& r, const char* k, const std::string& fallback = "");
double num_of(const nlohmann::json& r, const char* k, double fallback = 0);
// A number within +-kMaxExactInteger, truncated; else the fallback.
std::int64_t int_of(const nlohmann::json& r, const char* k, std::int64_t fallback = 0);
bool bool_of(const nlohmann::json& r, const char* k, bool fallback = false);
// A finite number, when the record has one.
std::optional<double> finite(const nlohmann::json& r, const char* k);
// finite(r, k) when it lies in [lo, hi].
std::optional<double> in_range(const nlohmann::json& r, const char* k, double lo, double hi);
// The array, or an empty one.
const nlohmann::json& arr_of(const nlohmann::json& r, const char* k);

}  // namespace sia::ctl
