#include "ctl/fsck.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

#include "channel/lease_memory.hpp"
#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "core/names.hpp"
#include "ctl/journal.hpp"
#include "model/shared_profiles.hpp"

namespace sia::ctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// An error's message without the file name it starts with and without the remark that
// the file is left alone (fsck says itself what it does with the file).
std::string detail(const std::string& message, const std::string& file) {
  std::string m = message;
  if (m.rfind(file + ": ", 0) == 0) m = m.substr(file.size() + 2);
  const std::string left = "; the file is left as it is for inspection";
  if (auto at = m.find(left); at != std::string::npos) m.erase(at, left.size());
  return m;
}

// What a journal line held, as far as it can be read: "record 7 (submit: a, b)".
std::string describe_record(std::string_view line) {
  json rec = parse_json_bounded(line);
  if (rec.is_discarded() || !rec.is_object()) {
    return std::to_string(line.size()) + " bytes that are not a JSON record";
  }
  std::string out = "record";
  if (rec.contains("seq") && rec["seq"].is_number_integer()) {
    out += " " + std::to_string(rec["seq"].get<std::int64_t>());
  }
  std::string what = rec.contains("type") && rec["type"].is_string()
                         ? rec["type"].get<std::string>()
                         : std::string("of unknown type");
  std::vector<std::string> names;
  for (const char* key : {"job", "node", "app"}) {
    if (rec.contains(key) && rec[key].is_string()) names.push_back(rec[key].get<std::string>());
  }
  if (rec.contains("round") && rec["round"].is_number_integer()) {
    names.push_back("round " + std::to_string(rec["round"].get<std::int64_t>()));
  }
  if (rec.contains("jobs") && rec["jobs"].is_array()) {
    for (const auto& j : rec["jobs"]) {
      if (j.is_string()) names.push_back(j.get<std::string>());
      if (j.is_object() && j.contains("name") && j["name"].is_string()) {
        names.push_back(j["name"].get<std::string>());
      }
    }
  }
  for (std::size_t i = 0; i < names.size(); ++i) what += (i ? ", " : ": ") + names[i];
  return out + " (" + what + ")";
}

// Beyond this (the year 5138) a record's time is not one the controller wrote.
constexpr double kMaxRecordTime = 1e11;

// What an intact record (CRC, sequence and type present) holds that the controller never
// writes: a type this build does not know, a job, app or node name outside the rule
// (core/names.hpp), a time that is not a number from 0 to kMaxRecordTime. "" when sound.
std::string record_problem(const json& rec) {
  const std::string type = rec["type"].get<std::string>();
  if (!known_record_type(type)) return "a record type this build does not know (\"" + type + "\")";
  if (auto t = rec.find("time"); t != rec.end()) {
    if (!t->is_number() || !(t->get<double>() >= 0 && t->get<double>() <= kMaxRecordTime)) {
      return "time: expected seconds from 0 to 1e11, got " + t->dump();
    }
  }
  auto bad_name = [&](const char* key, bool (*valid)(std::string_view)) -> std::string {
    auto v = rec.find(key);
    if (v == rec.end()) return "";
    if (v->is_string() && valid(v->get<std::string>())) return "";
    return std::string(key) + ": expected a name of " + std::string(kNameRule) + ", got " +
           v->dump();
  };
  for (const char* key : {"job", "app"}) {
    if (auto why = bad_name(key, valid_job_name); !why.empty()) return why;
  }
  if (auto why = bad_name("node", valid_node_name); !why.empty()) return why;
  // A request's jobs (a rejected submission's may be what it was rejected for).
  if (type != "rejected" && type != "submit") {
    if (auto jobs = rec.find("jobs"); jobs != rec.end() && jobs->is_array()) {
      for (const auto& j : *jobs) {
        if (!j.is_string() || !valid_job_name(j.get<std::string>())) {
          return "jobs: expected names of " + std::string(kNameRule) + ", got " + j.dump();
        }
      }
    }
  }
  return "";
}

// Renames `file` to FILE.damaged-<stamp> (FILE.damaged-<stamp>-N when that exists) and
// returns the new path.
std::string move_aside(const std::string& file, const std::string& stamp) {
  std::string to = file + ".damaged-" + stamp;
  std::error_code ec;
  for (int n = 2; fs::exists(to, ec); ++n)
    to = file + ".damaged-" + stamp + "-" + std::to_string(n);
  if (std::rename(file.c_str(), to.c_str()) != 0) {
    throw Error(ExitStatus::io,
                file + ": cannot move aside to " + to + ": " + std::strerror(errno));
  }
  return to;
}

struct JournalScan {
  bool damaged = false;
};

// Checks the journal line by line, applying every intact record to `book` (which holds
// the snapshot, or nothing when `snapshot_damaged`).
JournalScan scan_journal(const std::string& path, bool snapshot_damaged, JobBook& book,
                         FsckReport& rep) {
  JournalScan scan;
  const std::string text = read_journal_text(path);
  std::size_t pos = 0;
  std::int64_t line = 0, prev = -1;
  bool dropped_since_applied = false;
  auto problem = [&](std::int64_t at_line, std::size_t offset, const std::string& what,
                     const std::string& lost) {
    rep.problems.push_back({path, at_line, static_cast<std::int64_t>(offset), what, lost});
    scan.damaged = true;
  };
  while (pos < text.size()) {
    ++line;
    ++rep.journal_lines;
    const std::size_t offset = pos;
    const std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      problem(line, offset, "incomplete last record (a crash cut it before it was acknowledged)",
              "the unacknowledged " + describe_record(std::string_view(text).substr(pos)));
      break;
    }
    const std::string_view body = std::string_view(text).substr(pos, nl - pos);
    pos = nl + 1;
    JournalLine parsed = parse_journal_line(body);
    if (!parsed.error.empty()) {
      problem(line, offset, "corrupted (" + parsed.error + ")", describe_record(body));
      dropped_since_applied = true;
      continue;
    }
    json& rec = parsed.record;
    if (const std::string why = record_problem(rec); !why.empty()) {
      problem(line, offset, why, describe_record(body));
      dropped_since_applied = true;
      continue;
    }
    const std::int64_t seq = rec["seq"].get<std::int64_t>();
    if (prev >= 0 && seq <= prev) {
      problem(line, offset,
              "sequence " + std::to_string(seq) + " after " + std::to_string(prev) +
                  " (a repeated or out-of-order record)",
              describe_record(body));
      continue;
    }
    prev = seq;
    if (!snapshot_damaged && seq <= book.seq()) {  // already in the snapshot
      ++rep.journal_intact;
      continue;
    }
    if (!snapshot_damaged && seq > book.seq() + 1 && !dropped_since_applied) {
      problem(line, offset,
              "sequence " + std::to_string(seq) + ", but the book ends at " +
                  std::to_string(book.seq()) + " (records " + std::to_string(book.seq() + 1) +
                  ".." + std::to_string(seq - 1) + " are missing)",
              "");
    }
    try {
      book.apply(rec);
    } catch (const std::exception& e) {
      problem(line, offset, std::string("does not apply to the book: ") + e.what(),
              describe_record(body));
      dropped_since_applied = true;
      continue;
    }
    book.set_seq(seq);
    ++rep.journal_intact;
    dropped_since_applied = false;
  }
  return scan;
}

// Every kept round document (rounds/*.json) parses as a sia document (a profile store as
// one); returns the damaged ones.
std::vector<std::string> scan_rounds(const StateStore& store, FsckReport& rep) {
  std::vector<std::string> damaged;
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(store.path("rounds"), ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code ec2;
    if (it->path().extension() == ".json" && fs::is_regular_file(it->path(), ec2)) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    const std::string file = p.string();
    ++rep.round_files;
    try {
      if (std::string_view(file).ends_with("-profiles.json")) {
        read_shared_profiles(file);  // the profile store a round started from: JSON Lines
        continue;
      }
      json root = parse_json_bounded(read_input(file));
      if (root.is_discarded() || !root.is_object() || !root.contains("kind") ||
          !root["kind"].is_string()) {
        throw Error(ExitStatus::data, "not a sia document (JSON with a kind)");
      }
      read_document(file, {root["kind"].get<std::string>()});
    } catch (const Error& e) {
      rep.problems.push_back({file, 0, -1, detail(e.what(), file), "a kept round document"});
      damaged.push_back(file);
    }
  }
  return damaged;
}

// leases.json (channel/lease_memory.hpp): whether it reads, and its nodes against
// `cluster`'s (warnings). Returns whether it is damaged.
bool scan_leases(const StateStore& store, const Cluster* cluster, FsckReport& rep) {
  const std::string file = store.path(kLeasesFile);
  std::map<std::string, channel::Lease> leases;
  try {
    leases = channel::read_leases(file);
  } catch (const Error& e) {
    rep.problems.push_back({file, 0, -1, detail(e.what(), file),
                            "the remembered leases (until each node's next READY writes its own "
                            "again, a restarted controller holds a silent node for the assumed "
                            "lease)"});
    return true;
  }
  rep.lease_nodes = static_cast<std::int64_t>(leases.size());
  if (!cluster) return false;
  for (const auto& entry : leases) {
    const std::string& node = entry.first;  // not a structured binding: clang 14 cannot capture one
    const bool known = std::any_of(cluster->nodes.begin(), cluster->nodes.end(),
                                   [&](const ClusterNode& n) { return n.name == node; });
    if (!known) {
      rep.warnings.push_back(file + ": node " + node +
                             " is not in the cluster (its lease is kept, and used only if it "
                             "comes back)");
    }
  }
  return false;
}

}  // namespace

FsckReport fsck(const StateStore& store, bool repair, double now, const Cluster* cluster) {
  FsckReport rep;
  rep.state_dir = store.root();
  const std::string snapshot = store.path("snapshot.json");
  const std::string journal = store.path("journal.jsonl");

  JobBook book;
  bool snapshot_damaged = false;
  try {
    book = read_snapshot(snapshot);
    std::error_code ec;
    if (fs::exists(snapshot, ec)) rep.snapshot_seq = book.seq();
  } catch (const Error& e) {
    if (e.status() != ExitStatus::data) throw;
    snapshot_damaged = true;
    rep.problems.push_back({snapshot, 0, -1, detail(e.what(), snapshot),
                            "everything the snapshot held (the journal holds only what came "
                            "after it)"});
    book = JobBook{};
  }
  const JournalScan journal_scan = scan_journal(journal, snapshot_damaged, book, rep);

  std::vector<std::string> bad_inbox;
  for (const auto& name : store.inbox_files()) {
    ++rep.inbox_files;
    const std::string file = store.path("inbox/" + name);
    try {
      store.read_inbox(name);
    } catch (const Error& e) {
      rep.problems.push_back(
          {file, 0, -1, detail(e.what(), file), "a client request that never reached the journal"});
      bad_inbox.push_back(file);
    }
  }
  std::vector<std::string> bad_rounds = scan_rounds(store, rep);
  const std::string profiles = store.path(kProfilesFile);
  if (std::error_code pe; fs::exists(profiles, pe)) {
    try {
      read_shared_profiles(profiles);
    } catch (const Error& e) {
      rep.problems.push_back({profiles, 0, -1, detail(e.what(), profiles),
                              "the profile store's measurements (later jobs measure again)"});
      bad_rounds.push_back(profiles);
    }
  }
  if (scan_leases(store, cluster, rep)) bad_rounds.push_back(store.path(kLeasesFile));

  if (!repair || rep.clean()) return rep;

  // Salvage. Each step leaves a state that a second fsck --repair finishes: the damaged
  // snapshot goes aside before the new one is written, the new snapshot holds every intact
  // record before the damaged journal goes aside.
  const std::string stamp = cli::utc_time(now);
  if (snapshot_damaged) rep.moved.push_back(move_aside(snapshot, stamp));
  if (snapshot_damaged || journal_scan.damaged) {
    store.write_snapshot(book);
    if (journal_scan.damaged) rep.moved.push_back(move_aside(journal, stamp));
    Journal(journal).reset();
  }
  for (const auto& f : bad_inbox) rep.moved.push_back(move_aside(f, stamp));
  for (const auto& f : bad_rounds) rep.moved.push_back(move_aside(f, stamp));
  for (const auto& p : rep.problems) {
    if (p.lost.empty()) continue;
    rep.warnings.push_back(p.file + (p.line > 0 ? ": line " + std::to_string(p.line) : "") +
                           ": dropped " + p.lost);
  }

  // Would the controller now start? The same load as a round's, and its inbox.
  try {
    store.load(false, nullptr);
    for (const auto& name : store.inbox_files()) store.read_inbox(name);
  } catch (const Error& e) {
    throw Error(ExitStatus::software, store.root() +
                                          ": the repaired state directory still does not load (" +
                                          e.what() + "); the damaged originals are kept aside");
  }
  rep.repaired = true;
  return rep;
}

json fsck_to_json(const FsckReport& rep) {
  json problems = json::array();
  for (const auto& p : rep.problems) {
    json j = {{"file", p.file}, {"problem", p.what}};
    if (p.line > 0) j["line"] = p.line;
    if (p.offset >= 0) j["offset"] = p.offset;
    if (!p.lost.empty()) j["lost"] = p.lost;
    problems.push_back(j);
  }
  return {{"state_dir", rep.state_dir},
          {"clean", rep.clean()},
          {"repaired", rep.repaired},
          {"problems", problems},
          {"checked",
           {{"journal_lines", rep.journal_lines},
            {"journal_intact", rep.journal_intact},
            {"snapshot_seq", rep.snapshot_seq >= 0 ? json(rep.snapshot_seq) : json(nullptr)},
            {"inbox_files", rep.inbox_files},
            {"round_files", rep.round_files},
            {"lease_nodes", rep.lease_nodes}}},
          {"moved", rep.moved},
          {"warnings", rep.warnings}};
}

std::string fsck_table(const FsckReport& rep) {
  std::string out;
  for (const auto& p : rep.problems) {
    out += p.file;
    if (p.line > 0) out += ": line " + std::to_string(p.line);
    if (p.offset >= 0) out += " (byte " + std::to_string(p.offset) + ")";
    out += ": " + p.what + "\n";
  }
  for (const auto& w : rep.warnings) out += "warning: " + w + "\n";
  for (const auto& m : rep.moved) out += "moved aside: " + m + "\n";
  out += rep.state_dir + ": ";
  if (rep.clean()) {
    out += "clean";
  } else {
    out += std::to_string(rep.problems.size()) +
           (rep.problems.size() == 1 ? " problem" : " problems") +
           (rep.repaired ? ", repaired; the controller starts" : " (sia-ctl fsck --repair)");
  }
  out += "; journal: " + std::to_string(rep.journal_intact) + " of " +
         std::to_string(rep.journal_lines) + " records intact; snapshot: " +
         (rep.snapshot_seq >= 0 ? "at record " + std::to_string(rep.snapshot_seq)
                                : std::string("none")) +
         "; " + std::to_string(rep.inbox_files) + " inbox and " + std::to_string(rep.round_files) +
         " round files; leases of " + std::to_string(rep.lease_nodes) + " node(s)\n";
  return out;
}

}  // namespace sia::ctl
