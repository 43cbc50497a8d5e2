// The controller's journal: STATE/journal.jsonl, an append-only JSON Lines file of
// records {"crc": "xxxxxxxx", "seq": N, "type": T, ...} written after the last snapshot.
// `crc` is the CRC-32 (as zlib computes it, eight hex digits) of the record without its
// crc field, serialised compactly with sorted keys; `seq` counts up by one from record to
// record. append() writes a batch of records with one write and fdatasync()s before it
// returns: a record is acknowledged only once it is on disk.
// Reading: a last line without its newline is a record a crash cut before it was
// acknowledged -- it is dropped with a warning (and, for a writer, cut off the file so
// the next append starts on a fresh line). Any other damage -- a line that does not parse,
// a checksum that does not match, a sequence number out of order -- is an error naming
// the file and line ("STATE/journal.jsonl: line 7: corrupted (checksum mismatch)", status
// 65; 74 for an I/O error) and the file is left exactly as it is.
// Thread-safety: one writer (the holder of the state lock); readers may run beside it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sia::ctl {

// The record's checksum: CRC-32 of its compact serialisation without "crc".
std::string record_crc(const nlohmann::json& record_without_crc);
// The checksum of a snapshot's data ("crc32:xxxxxxxx").
std::string data_checksum(const nlohmann::json& data);

struct JournalRead {
  std::vector<nlohmann::json> records;  // in file order, crc removed
  std::vector<std::string> warnings;    // the torn last line, if any
  std::uint64_t complete_bytes = 0;     // length of the file up to its last complete line
  bool torn = false;
};

// The journal's bytes ("" for a missing file; status 74 when it cannot be read).
std::string read_journal_text(const std::string& path);
// Reads and checks the whole journal (a missing file is an empty journal).
JournalRead read_journal(const std::string& path);

// One line (without its newline) as a record, crc removed; or, in `error`, why it is not
// one: "not a JSON object", "no checksum", "checksum mismatch", "no sequence number or
// type". The sequence is the caller's to check (read_journal, fsck).
struct JournalLine {
  nlohmann::json record;
  std::string error;  // "" when the record is intact
};
JournalLine parse_journal_line(std::string_view line);

class Journal {
 public:
  explicit Journal(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // Cuts a torn last line (see above) off the file; call once, holding the lock.
  void cut_torn_tail(std::uint64_t complete_bytes);
  // Appends records (each already holding "seq" and "type"), adds their crc, fsyncs.
  void append(const std::vector<nlohmann::json>& records);
  // Empties the journal atomically (after a snapshot took its records in).
  void reset();

 private:
  std::string path_;
};

}  // namespace sia::ctl
