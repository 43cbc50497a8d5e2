#include "worker/batch_plan.hpp"
#include "core/json_limits.hpp"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace sia::worker {

namespace {

// An integer field in [lo, hi], else nullopt.
std::optional<long> int_field(const nlohmann::json& j, const char* key, long lo, long hi) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v < lo || v > hi) return std::nullopt;
  return static_cast<long>(v);
}

}  // namespace

std::optional<BatchPlan> parse_batch_plan(const std::string& text, long round, int world_size,
                                          const std::function<void(const std::string&)>& warn) {
  nlohmann::json j = parse_json_bounded(text);
  if (!j.is_object() || j.value("type", "") != "batch_plan") return std::nullopt;
  auto r = int_field(j, "round", 0, 1L << 40);
  auto plan = int_field(j, "plan", 1, 1L << 30);
  auto local = int_field(j, "local_bsz", 1, 1L << 30);
  auto accum = int_field(j, "accum_steps", 0, kMaxAccumSteps);
  auto batch_it = j.find("batch_size");
  if (!r || !plan || !local || !accum || batch_it == j.end() || !batch_it->is_number()) {
    return std::nullopt;
  }
  if (*r != round) return std::nullopt;  // another generation's plan
  const auto global = global_batch_of(batch_it->get<double>());
  BatchSetting b{global.value_or(-1), static_cast<int>(*local), static_cast<int>(*accum)};
  if (std::string why = batch_mismatch(b, world_size); !why.empty()) {
    if (warn) warn("batch plan " + std::to_string(*plan) + " ignored: " + why);
    return std::nullopt;
  }
  return BatchPlan{static_cast<int>(*plan), b};
}

BatchPlanWatcher::BatchPlanWatcher(std::string path, long round, int world_size,
                                   std::function<void(const std::string&)> warn)
    : path_(std::move(path)), round_(round), world_size_(world_size), warn_(std::move(warn)) {}

std::optional<BatchPlan> BatchPlanWatcher::poll() {
  if (path_.empty()) return std::nullopt;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return std::nullopt;
  const std::int64_t mtime =
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (static_cast<std::uint64_t>(st.st_ino) == seen_ino_ && mtime == seen_mtime_ns_ &&
      st.st_size == seen_size_) {
    return std::nullopt;
  }
  seen_ino_ = static_cast<std::uint64_t>(st.st_ino);
  seen_mtime_ns_ = mtime;
  seen_size_ = st.st_size;
  if (st.st_size > 4096) return std::nullopt;  // not a plan
  std::ifstream in(path_);
  std::stringstream text;
  text << in.rdbuf();
  auto plan = parse_batch_plan(text.str(), round_, world_size_, warn_);
  if (!plan || plan->plan <= applied_) return std::nullopt;
  return plan;
}

}  // namespace sia::worker
