// fsck: checks every file of a controller state directory that the controller reads when
// it starts (sia-ctl(1), "fsck"; state_store.hpp says what each file is):
//   journal.jsonl   every line: its framing (a newline ends it), that it is a JSON object,
//                   its CRC, its sequence number and type, a type this build knows with
//                   job, app and node names by the rule (core/names.hpp) and a time from 0
//                   to 1e11 s, that its sequence follows the previous record's, and that it
//                   applies to the book
//   snapshot.json   that it parses, its checksum, that it reads as a JobBook
//   inbox/*.json    that each request reads as the round engine reads it
//   rounds/*.json   that each kept round document parses as a sia document
//   leases.json     that it is a regular file (a symbolic link is never followed) and reads
//                   as a NodeLeases document (channel/lease_memory.hpp: node names by the
//                   rule, finite lease figures, fence_after > 0, grace >= 0); a node the
//                   given cluster does not have is a warning, not damage (a node taken out
//                   of cluster.toml keeps its line, and no placement holds it again)
// and, with `repair`, salvages: the book is rebuilt from the intact snapshot (or nothing,
// when the snapshot is damaged) and every intact journal record in order (a torn tail is
// cut, a damaged record is dropped, naming what it held), written as a new snapshot with
// an empty journal (core/atomic_file; StateStore::compact), every damaged original moved
// aside as FILE.damaged-<UTC time> (never deleted; a damaged leases.json too: the next
// READY of each node writes it anew, and until then a restarted controller holds a silent
// node for the assumed lease), then the state directory is loaded
// the way the controller loads it to check that it would now start.
// The caller holds the state lock (StateStore::lock): never repair under a live controller.
// Thread-safety: one thread; the state directory is the caller's while it holds the lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "ctl/state_store.hpp"

namespace sia::ctl {

// One problem found in one file.
struct FsckProblem {
  std::string file;          // the path
  std::int64_t line = 0;     // journal: the line (1-based); 0 elsewhere
  std::int64_t offset = -1;  // journal: the line's byte offset; -1 elsewhere
  std::string what;          // what is wrong
  std::string lost;          // what a repair drops with it ("" when nothing, or unknown)
};

struct FsckReport {
  std::string state_dir;
  std::vector<FsckProblem> problems;
  std::int64_t journal_lines = 0;   // lines, a torn tail included
  std::int64_t journal_intact = 0;  // records that are intact and apply to the book
  std::int64_t snapshot_seq = -1;   // the snapshot's sequence; -1 without an intact one
  std::int64_t inbox_files = 0;     // checked
  std::int64_t round_files = 0;     // checked
  std::int64_t lease_nodes = 0;     // nodes whose lease leases.json holds (intact)
  bool repaired = false;            // a repair ran and the controller now starts
  std::vector<std::string> moved;   // with repair: the damaged originals' new paths
  // With repair, what was lost; and what is odd but no damage (a lease of a node the
  // cluster does not have); one line each.
  std::vector<std::string> warnings;
  bool clean() const { return problems.empty(); }
};

// Checks (and with `repair`, salvages) the state directory of `store`. `now` (seconds
// since the epoch) names the moved-aside files. `cluster`: the configured cluster, whose
// nodes leases.json's are checked against (null: none configured, not checked). Throws
// Error (status 70) when a repair leaves a state the controller still cannot load (the
// originals stay aside).
FsckReport fsck(const StateStore& store, bool repair, double now, const Cluster* cluster = nullptr);

// The Fsck document's data (sia-formats(5)) and the table: one line per problem
// ("FILE: line N (byte B): WHAT"), then the summary.
nlohmann::json fsck_to_json(const FsckReport& report);
std::string fsck_table(const FsckReport& report);

}  // namespace sia::ctl
