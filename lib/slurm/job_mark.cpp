#include "slurm/job_mark.hpp"

#include <charconv>

#include "core/names.hpp"

namespace sia::slurm {

namespace {
constexpr std::string_view kPrefix = "sia:";
}

std::string mark_comment(const JobMark& mark) {
  return std::string(kPrefix) + mark.job + ":" + std::to_string(mark.generation);
}

std::string mark_job_name(const JobMark& mark) {
  return "sia." + mark.job + "." + std::to_string(mark.generation);
}

std::optional<JobMark> parse_mark_comment(std::string_view comment) {
  if (comment.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  comment.remove_prefix(kPrefix.size());
  auto colon = comment.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  JobMark m;
  m.job = std::string(comment.substr(0, colon));
  std::string_view gen = comment.substr(colon + 1);
  if (gen.empty() || gen.size() > 12) return std::nullopt;
  auto [p, ec] = std::from_chars(gen.data(), gen.data() + gen.size(), m.generation);
  if (ec != std::errc() || p != gen.data() + gen.size() || m.generation < 0) return std::nullopt;
  if (!valid_job_name(m.job)) return std::nullopt;
  return m;
}

}  // namespace sia::slurm
