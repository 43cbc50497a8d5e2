// A rank's log (STATE/jobs/JOB/logs/rank-N.log, see state_dir.hpp) read in bounded pieces:
// its last lines, or its bytes from an offset on -- what `sia-run logs` prints, the tail a
// failed job's status carries, and what an agent hands the controller. Offsets count the
// file's bytes; invalid UTF-8 in the text is replaced by U+FFFD, so the text is always
// valid JSON string content. The log is opened by os/safe_open.hpp's rule: one that the job
// replaced by a link (or a FIFO, or a second hard link) is refused with status 77.
// Thread-safety: pure functions over files; a log being appended to reads as it was at
// one moment (a partial last line is returned as it stands).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "exec/state_dir.hpp"

namespace sia::exec {

// The most bytes one read returns (`sia-run logs`, an agent's answer): 1 MiB.
inline constexpr std::int64_t kMaxLogRead = 1 << 20;
// A failed job's log tail in its status: its last lines, at most this many bytes.
inline constexpr int kFailureTailLines = 20;
inline constexpr std::int64_t kFailureTailBytes = 4096;

struct LogChunk {
  std::int64_t offset = 0;  // the file offset of the text's first byte
  std::int64_t next = 0;    // where the next read starts (after the last byte read)
  std::int64_t size = 0;    // the file's size as read
  bool truncated = false;   // the limit left out bytes the request asked for
  std::string text;
};

// The bytes from `offset` on, at most `max_bytes` (an offset past the end reads nothing:
// next is then the size). Status 66 when the file does not exist.
LogChunk read_log_from(const std::string& path, std::int64_t offset, std::int64_t max_bytes);

// The last `lines` lines (a final line without its newline counts), at most `max_bytes`:
// when the limit cuts a line, the text starts at the next whole line (or mid-line when
// there is none) and `truncated` is set. Status 66 when the file does not exist.
LogChunk read_log_tail(const std::string& path, int lines, std::int64_t max_bytes);

// Which part of which rank's log to read.
struct LogRequest {
  std::string job;
  int rank = 0;
  int tail = -1;                     // >= 0: the last `tail` lines; else the bytes from `offset` on
  std::int64_t offset = 0;           // with tail < 0
  std::int64_t limit = kMaxLogRead;  // at most this many bytes (clamped to kMaxLogRead)
};

// The data of a RunLog document: {node, state_dir, job, rank, log (its path), state (the
// job's state on this node), live, offset, next, size, truncated, text}. Status 64 for a
// rank outside the job's world, 66 for a job this node never ran or a rank without a log
// here (it runs on another node, or has not started).
nlohmann::json rank_log_data(const StateDir& state, const LogRequest& request);

// The refusal of a rank outside a job's `world` ranks (status 64): "rank 3 is out of
// range: job "j" has ranks 0-1" (or "has only rank 0").
Error rank_out_of_range(const std::string& job, int rank, int world);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(const std::string& text);

}  // namespace sia::exec
