// StateStore: the controller's state directory (sia-ctl(1), "The state directory").
//   STATE/lock           flock: `serve` holds it for its lifetime, `round` for one round
//   STATE/admission.lock flock: held while a submission with a guaranteed job is admitted
//                        and queued (ctl/admission.hpp), by `submit` and by serve's SUBMIT
//   STATE/snapshot.json  the JobBook at journal sequence S, with a checksum, written
//                        atomically (temp file, fsync, rename, fsync of the directory)
//   STATE/journal.jsonl  the records after S (journal.hpp)
//   STATE/inbox/         local client requests (submit, cancel), one atomic file each
//   STATE/rounds/        rNNNNNN-{cluster,profiles,jobs,goodput,allocation,placement}.json
//                        of the last `retention` rounds
//   STATE/profiles.json  the profile store (model/shared_profiles.hpp; ctl/stages.hpp)
//   STATE/leases.json    each node's lease as its agent last said it (serve; written and
//                        read by channel/lease_memory.hpp)
//   STATE/run/           files handed to node commands and stage programs (this round's)
//   STATE/nodes/NODE/    sia-run state directories of the default local node driver
// Loading never repairs anything but a torn last journal line (see journal.hpp): a
// snapshot whose checksum does not match, or that does not parse, is an error naming the
// file (status 65; 74 for an I/O error) and the file is left as it is.
// Thread-safety: one writer, holding lock(); readers (clients) load without the lock and
// retry when a compaction ran under their feet.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/journal.hpp"
#include "exec/state_dir.hpp"

namespace sia::ctl {

// The profile store's file in the state directory.
inline constexpr const char* kProfilesFile = "profiles.json";
// The daemon's remembered leases (channel/lease_memory.hpp) in the state directory.
inline constexpr const char* kLeasesFile = "leases.json";

class StateStore {
 public:
  explicit StateStore(const std::string& root);

  const std::string& root() const { return root_; }
  std::string path(const std::string& name) const { return root_ + "/" + name; }
  bool exists() const;
  // Status 66 "DIR: no such state directory" unless it exists: a typo'd --state-dir
  // must not read as an empty cluster.
  void check_exists() const;
  // Creates the directory and its sub-directories.
  void create() const;

  // Takes STATE/lock for `holder` ("sia-ctl round", "sia-ctl serve"); status 75 when
  // another process holds it ("round lock held by pid N; retry later").
  exec::StateLock lock(const std::string& holder) const;
  // Takes STATE/admission.lock for `holder`, waiting for the one who holds it (a
  // submission being admitted: moments). Creates the directory when it has none.
  exec::StateLock admission_lock(const std::string& holder) const;

  // Snapshot + journal. A writer (holding the lock) also cuts a torn last journal line.
  // Warnings (the torn line) are appended to `warnings`.
  JobBook load(bool writer, std::vector<std::string>* warnings) const;
  // Numbers the records after book.seq(), appends them to the journal (one fsync), then
  // applies them to `book`. Returns how many changed something.
  int commit(JobBook& book, std::vector<nlohmann::json> records) const;
  // Writes `book` as the new snapshot, then empties the journal.
  void compact(const JobBook& book) const;
  // Only the first half of compact(): `book` as the new snapshot (atomically).
  void write_snapshot(const JobBook& book) const;

  // Inbox: request files in arrival order (names sort by time).
  std::vector<std::string> inbox_files() const;
  std::string write_inbox(const nlohmann::json& request) const;  // returns the file name
  nlohmann::json read_inbox(const std::string& name) const;      // status 65 if malformed
  void remove_inbox(const std::string& name) const;
  void reject_inbox(const std::string& name) const;  // moved to inbox/rejected/

  // Rounds: STATE/rounds/rNNNNNN-SUFFIX.json.
  std::string round_file(std::int64_t round, const std::string& suffix) const;
  void save_round(std::int64_t round,
                  const std::vector<std::pair<std::string, std::string>>& files) const;
  void prune_rounds(std::int64_t current, int retention) const;
  std::vector<std::int64_t> saved_rounds() const;

 private:
  std::string root_;
};

// Reads a snapshot file (STATE/snapshot.json); an empty book when there is none. Status 65
// naming the file when it does not parse or its checksum does not match.
JobBook read_snapshot(const std::string& path);

// The request document written into the inbox: {"type": "submit"|"cancel"|"hold"|"release"|
// "requeue", ...}.
nlohmann::json inbox_request(const std::string& type, const std::string& identity, double time,
                             const nlohmann::json& body);

}  // namespace sia::ctl
