#include "ctl/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/crc32.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "os/atomic_file.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

std::string hex8(std::uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

void fsync_dir_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

std::string record_crc(const json& record) {
  return hex8(crc32(record.dump()));
}

std::string data_checksum(const json& data) {
  return "crc32:" + hex8(crc32(data.dump()));
}

JournalLine parse_journal_line(std::string_view line) {
  JournalLine out;
  json rec = parse_json_bounded(line);
  if (rec.is_discarded() || !rec.is_object()) {
    out.error = "not a JSON object";
  } else if (!rec.contains("crc") || !rec["crc"].is_string()) {
    out.error = "no checksum";
  } else {
    std::string crc = rec["crc"].get<std::string>();
    rec.erase("crc");
    if (record_crc(rec) != crc) {
      out.error = "checksum mismatch";
    } else if (!rec.contains("seq") || !rec["seq"].is_number_integer() || !rec.contains("type") ||
               !rec["type"].is_string()) {
      out.error = "no sequence number or type";
    } else {
      out.record = std::move(rec);
    }
  }
  return out;
}

std::string read_journal_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return "";
    throw Error(ExitStatus::io, path + ": cannot read: " + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(ExitStatus::io, path + ": read error");
  return ss.str();
}

JournalRead read_journal(const std::string& path) {
  JournalRead out;
  const std::string text = read_journal_text(path);
  std::size_t pos = 0;
  std::size_t line_no = 0;
  std::int64_t prev_seq = -1;
  while (pos < text.size()) {
    ++line_no;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      out.torn = true;
      out.warnings.push_back(path + ": line " + std::to_string(line_no) +
                             ": incomplete last record (cut by a crash before it was "
                             "acknowledged); ignored");
      break;
    }
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    out.complete_bytes = pos;
    auto corrupted = [&](const std::string& why) {
      throw Error(ExitStatus::data, path + ": line " + std::to_string(line_no) + ": corrupted (" +
                                        why + "); the file is left as it is for inspection");
    };
    JournalLine parsed = parse_journal_line(line);
    if (!parsed.error.empty()) corrupted(parsed.error);
    json& rec = parsed.record;
    std::int64_t seq = rec["seq"].get<std::int64_t>();
    if (prev_seq >= 0 && seq != prev_seq + 1) {
      corrupted("sequence " + std::to_string(seq) + " after " + std::to_string(prev_seq));
    }
    prev_seq = seq;
    out.records.push_back(std::move(rec));
  }
  return out;
}

void Journal::cut_torn_tail(std::uint64_t complete_bytes) {
  if (::truncate(path_.c_str(), static_cast<off_t>(complete_bytes)) != 0) {
    throw Error(ExitStatus::io,
                path_ + ": cannot cut the incomplete last record: " + std::strerror(errno));
  }
}

void Journal::append(const std::vector<json>& records) {
  if (records.empty()) return;
  std::string text;
  for (const auto& r : records) {
    json rec = r;
    rec.erase("crc");
    json line = rec;
    line["crc"] = record_crc(rec);
    text += line.dump() + "\n";
  }
  std::error_code ec;
  const bool created = !std::filesystem::exists(path_, ec);
  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, os::kPrivateFile);
  if (fd < 0) {
    throw Error(ExitStatus::cant_create, path_ + ": cannot open: " + std::strerror(errno));
  }
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      throw Error(ExitStatus::io, path_ + ": cannot append: " + std::strerror(err));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(ExitStatus::io, path_ + ": cannot sync: " + std::strerror(err));
  }
  ::close(fd);
  if (created) fsync_dir_of(path_);
}

void Journal::reset() {
  os::write_file_atomic(path_, "");
}

}  // namespace sia::ctl
