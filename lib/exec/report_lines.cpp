#include "exec/report_lines.hpp"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/job_spec.hpp"
#include "core/json_limits.hpp"
#include "os/safe_open.hpp"

namespace sia::exec {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Jobs that have a reports file (a job may have reports but no launch record any more).
std::vector<std::string> jobs_with_reports(const StateDir& state) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(state.root() + "/jobs", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string job = it->path().filename().string();
    std::error_code ec2;
    if (valid_job_name(job) &&
        fs::is_regular_file(fs::symlink_status(state.report_path(job), ec2))) {
      out.push_back(job);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reads [from, from + max) of `path`; "" at or past the end. The file is the job's
// account's: it is opened by os/safe_open.hpp's rule (a link or a FIFO is refused).
std::string read_range(const std::string& path, std::int64_t from, std::size_t max,
                       std::int64_t* size) {
  *size = 0;
  os::Fd fd = os::open_file(path, os::Access::read);
  if (!fd) return "";
  *size = os::file_size(fd.get(), path);
  if (from >= *size) return "";
  return os::read_at(fd.get(), from,
                     static_cast<std::int64_t>(
                         std::min<std::size_t>(max, static_cast<std::size_t>(*size - from))));
}

}  // namespace

std::vector<ReportLineRecord> read_report_lines(const StateDir& state,
                                                const ReportReadOptions& options,
                                                std::vector<std::string>* warnings) {
  std::vector<ReportLineRecord> out;
  if (!state.exists()) return out;
  auto warn = [&](const std::string& w) {
    if (warnings) warnings->push_back(w);
  };
  for (const auto& job : jobs_with_reports(state)) {
    std::int64_t from = 0;
    if (auto it = options.after.find(job); it != options.after.end()) from = it->second;
    const std::string path = state.report_path(job);
    std::int64_t size = 0;
    std::string text = read_range(path, from, options.max_bytes_per_job, &size);
    if (from > size) {
      warn(path + ": " + std::to_string(size) + " bytes, shorter than offset " +
           std::to_string(from) + " asked for (the file was replaced?); nothing read");
      continue;
    }
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) break;  // incomplete: still being written
      std::string line = text.substr(pos, nl - pos);
      const std::int64_t offset = from + static_cast<std::int64_t>(pos);
      pos = nl + 1;
      if (line.empty()) continue;
      json parsed = parse_json_bounded(line);
      if (parsed.is_discarded() || !parsed.is_object()) {
        warn(path + ": offset " + std::to_string(offset) + ": not a JSON object; skipped");
        continue;
      }
      out.push_back({job, offset, from + static_cast<std::int64_t>(pos), std::move(line)});
    }
  }
  return out;
}

std::pair<std::string, std::int64_t> parse_after(const std::string& text) {
  auto eq = text.rfind('=');
  if (eq != std::string::npos && eq > 0 && eq + 1 < text.size()) {
    std::string job = text.substr(0, eq);
    std::string num = text.substr(eq + 1);
    bool digits = num.size() <= 18 &&
                  std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && valid_job_name(job)) return {job, std::stoll(num)};
  }
  throw Error(
      ExitStatus::usage,
      "--after: expected JOB=OFFSET (a job name and a byte offset >= 0), got \"" + text + "\"");
}

json report_line_to_json(const ReportLineRecord& r) {
  return {{"job", r.job},
          {"offset", r.offset},
          {"next", r.next},
          {"report", parse_json_bounded(r.line)}};
}

}  // namespace sia::exec
