#include "slurm/job_mark.hpp"

#include <charconv>

#include "core/names.hpp"

namespace sia::slurm {

namespace {
constexpr std::string_view kPrefix = "sia:";

bool valid_token(std::string_view t) {
  if (t.empty() || t.size() > kMaxMarkToken) return false;
  for (char c : t) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}
}  // namespace

std::string mark_comment(const JobMark& mark) {
  return std::string(kPrefix) + mark.job + ":" + std::to_string(mark.generation) +
         (mark.token.empty() ? "" : ":" + mark.token);
}

std::string mark_job_name(const JobMark& mark) {
  return "sia." + mark.job + "." + std::to_string(mark.generation);
}

std::optional<JobMark> parse_mark_comment(std::string_view comment) {
  if (comment.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  comment.remove_prefix(kPrefix.size());
  // JOB:GEN or JOB:GEN:TOKEN (a job name holds no ':').
  auto colon = comment.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  JobMark m;
  m.job = std::string(comment.substr(0, colon));
  std::string_view gen = comment.substr(colon + 1);
  if (auto second = gen.find(':'); second != std::string_view::npos) {
    if (!valid_token(gen.substr(second + 1))) return std::nullopt;
    m.token = std::string(gen.substr(second + 1));
    gen = gen.substr(0, second);
  }
  if (gen.empty() || gen.size() > 12) return std::nullopt;
  auto [p, ec] = std::from_chars(gen.data(), gen.data() + gen.size(), m.generation);
  if (ec != std::errc() || p != gen.data() + gen.size() || m.generation < 0) return std::nullopt;
  if (!valid_job_name(m.job)) return std::nullopt;
  return m;
}

}  // namespace sia::slurm
