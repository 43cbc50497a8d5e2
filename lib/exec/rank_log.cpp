#include "exec/rank_log.hpp"

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "os/safe_open.hpp"

namespace sia::exec {

namespace {

// The log lies in a directory the job's account owns: it is opened by os/safe_open.hpp's
// rule, so a link the job put in its place is refused (status 77), never read through.
os::Fd open_log(const std::string& path, std::int64_t* size) {
  os::Fd fd = os::open_file(path, os::Access::read);
  if (!fd) throw Error(ExitStatus::no_input, path + ": no such log");
  *size = os::file_size(fd.get(), path);
  return fd;
}

std::string read_range(const os::Fd& in, std::int64_t from, std::int64_t count) {
  return os::read_at(in.get(), from, count);
}

// Length of the valid UTF-8 sequence at s[i], 0 when it is not one.
std::size_t sequence_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

LogChunk read_log_from(const std::string& path, std::int64_t offset, std::int64_t max_bytes) {
  LogChunk c;
  auto in = open_log(path, &c.size);
  c.offset = std::clamp<std::int64_t>(offset, 0, c.size);
  const std::int64_t count = std::min(c.size - c.offset, std::max<std::int64_t>(max_bytes, 0));
  std::string raw = read_range(in, c.offset, count);
  c.next = c.offset + static_cast<std::int64_t>(raw.size());
  c.truncated = c.next < c.size;
  c.text = valid_utf8(raw);
  return c;
}

LogChunk read_log_tail(const std::string& path, int lines, std::int64_t max_bytes) {
  LogChunk c;
  auto in = open_log(path, &c.size);
  c.next = c.size;
  c.offset = c.size;
  if (lines <= 0 || c.size == 0) return c;
  const std::int64_t window = std::min(c.size, std::max<std::int64_t>(max_bytes, 0));
  const std::int64_t from = c.size - window;
  std::string raw = read_range(in, from, window);
  // Walk back over `lines` line ends; a newline ending the file ends the last line.
  std::size_t end = raw.size();
  if (end > 0 && raw[end - 1] == '\n') --end;
  std::size_t start = 0;
  int count = 0;
  while (count < lines && end > 0) {
    auto nl = raw.rfind('\n', end - 1);
    if (nl == std::string::npos) break;
    start = nl + 1;
    end = nl;
    ++count;
  }
  if (count < lines) {
    // Fewer lines than asked in the window: all of it, or from its first whole line when
    // the window does not begin the file.
    start = 0;
    if (from > 0) {
      c.truncated = true;
      auto nl = raw.find('\n');
      if (nl != std::string::npos && nl + 1 < raw.size()) start = nl + 1;
    }
  }
  c.offset = from + static_cast<std::int64_t>(start);
  c.text = valid_utf8(raw.substr(start));
  return c;
}

Error rank_out_of_range(const std::string& job, int rank, int world) {
  return Error(ExitStatus::usage,
               "rank " + std::to_string(rank) + " is out of range: job \"" + job + "\" has " +
                   (world == 1 ? "only rank 0" : "ranks 0-" + std::to_string(world - 1)));
}

nlohmann::json rank_log_data(const StateDir& state, const LogRequest& r) {
  const std::string& job = r.job;
  std::optional<JobRecord> record;
  if (state.exists() && valid_job_name(job)) record = state.record(job);
  if (!record || !record->launch) {
    throw Error(ExitStatus::no_input, "job \"" + job + "\" has not run on this node (state " +
                                          "directory " + state.root() + "): no log");
  }
  const int world = record->launch->world_size();
  if (r.rank < 0 || r.rank >= world) {
    throw rank_out_of_range(job, r.rank, world);
  }
  const std::string path = state.rank_log(job, r.rank);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    throw Error(ExitStatus::no_input, "rank " + std::to_string(r.rank) + " of job \"" + job +
                                          "\" has no log on this node (it runs on another " +
                                          "node, or has not started)");
  }
  const std::int64_t limit = std::clamp<std::int64_t>(r.limit, 0, kMaxLogRead);
  LogChunk c =
      r.tail >= 0 ? read_log_tail(path, r.tail, limit) : read_log_from(path, r.offset, limit);
  const std::string node = state.bound_node();
  return {{"node", node.empty() ? nlohmann::json(nullptr) : nlohmann::json(node)},
          {"state_dir", state.root()},
          {"job", job},
          {"rank", r.rank},
          {"log", path},
          {"state", to_string(record->status.state)},
          {"live", record->live()},
          {"offset", c.offset},
          {"next", c.next},
          {"size", c.size},
          {"truncated", c.truncated},
          {"text", c.text}};
}

}  // namespace sia::exec
