#include "ctl/state_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "os/atomic_file.hpp"
#include "os/lock_file.hpp"
#include "os/make_dirs.hpp"
#include "round/round_documents.hpp"

namespace sia::ctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string slurp(const std::string& path, bool* missing) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      *missing = true;
      return "";
    }
    throw Error(ExitStatus::io, path + ": cannot read: " + std::strerror(errno));
  }
  *missing = false;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw Error(ExitStatus::io, path + ": read error");
  return s.str();
}

}  // namespace

JobBook read_snapshot(const std::string& path) {
  bool missing = false;
  std::string text = slurp(path, &missing);
  if (missing) return JobBook{};
  auto corrupted = [&](const std::string& why) -> JobBook {
    throw Error(ExitStatus::data,
                path + ": corrupted (" + why + "); the file is left as it is for inspection");
  };
  json root = parse_json_bounded(text);
  if (root.is_discarded() || !root.is_object()) return corrupted("not a JSON document");
  if (!root.contains("data") || !root.contains("checksum") || !root["checksum"].is_string()) {
    return corrupted("no data or no checksum");
  }
  Node r(root, path, "");
  check_envelope(r, {"ControllerState"});
  std::string recorded = root["checksum"].get<std::string>();
  std::string computed = data_checksum(root["data"]);
  if (recorded != computed) {
    return corrupted("checksum mismatch: recorded " + recorded + ", computed " + computed);
  }
  return JobBook::from_json(root["data"], path);
}

namespace {

std::string inbox_name() {
  static std::atomic<int> counter{0};
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  char buf[96];
  std::snprintf(buf, sizeof buf, "%020lld-%d-%d.json", static_cast<long long>(ns),
                static_cast<int>(::getpid()), counter++);
  return buf;
}

}  // namespace

StateStore::StateStore(const std::string& root)
    : root_(fs::absolute(root).lexically_normal().string()) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

bool StateStore::exists() const {
  std::error_code ec;
  return fs::is_directory(root_, ec);
}

void StateStore::check_exists() const {
  if (!exists()) {
    throw Error(ExitStatus::no_input,
                root_ + ": no such state directory (a submission or round creates it)");
  }
}

void StateStore::create() const {
  os::make_dirs(path("inbox"));
  os::make_dirs(path("rounds"));
  os::make_dirs(path("run"));
}

exec::StateLock StateStore::lock(const std::string& holder) const {
  os::LockAttempt a =
      os::try_lock_file(path("lock"), std::to_string(::getpid()) + " (" + holder + ")");
  if (a.lock) return std::move(*a.lock);
  throw Error(ExitStatus::temp_fail, root_ + ": round lock held" +
                                         (a.holder.empty() ? "" : " by pid " + a.holder) +
                                         "; retry later");
}

exec::StateLock StateStore::admission_lock(const std::string& holder) const {
  return os::wait_lock_file(path("admission.lock"),
                            std::to_string(::getpid()) + " (" + holder + ")");
}

JobBook StateStore::load(bool writer, std::vector<std::string>* warnings) const {
  for (int attempt = 0;; ++attempt) {
    JobBook book = read_snapshot(path("snapshot.json"));
    JournalRead jr = read_journal(path("journal.jsonl"));
    bool gap = false;
    std::size_t line = 0;
    for (const auto& rec : jr.records) {
      ++line;
      std::int64_t seq = rec["seq"].get<std::int64_t>();
      if (seq <= book.seq()) continue;  // already in the snapshot
      if (seq != book.seq() + 1) {
        if (!writer && attempt < 20) {  // a compaction ran between our two reads
          gap = true;
          break;
        }
        throw Error(ExitStatus::data, path("journal.jsonl") + ": line " + std::to_string(line) +
                                          ": corrupted (sequence " + std::to_string(seq) +
                                          ", but the snapshot " + "ends at " +
                                          std::to_string(book.seq()) +
                                          "); the file is left as it is for inspection");
      }
      book.apply(rec);
      book.set_seq(seq);
    }
    if (gap) {
      ::usleep(20000);
      continue;
    }
    if (warnings) warnings->insert(warnings->end(), jr.warnings.begin(), jr.warnings.end());
    if (writer && jr.torn) Journal(path("journal.jsonl")).cut_torn_tail(jr.complete_bytes);
    return book;
  }
}

int StateStore::commit(JobBook& book, std::vector<json> records) const {
  if (records.empty()) return 0;
  std::int64_t seq = book.seq();
  for (auto& r : records) r["seq"] = ++seq;
  Journal(path("journal.jsonl")).append(records);
  int changed = 0;
  for (const auto& r : records) changed += book.apply(r) ? 1 : 0;
  book.set_seq(seq);
  return changed;
}

void StateStore::compact(const JobBook& book) const {
  write_snapshot(book);
  Journal(path("journal.jsonl")).reset();
}

void StateStore::write_snapshot(const JobBook& book) const {
  json data = book.to_json();
  json root = {{"apiVersion", kApiVersion},
               {"kind", "ControllerState"},
               {"metadata", {{"generator", "sia-ctl"}}},
               {"data", data},
               {"checksum", data_checksum(data)}};
  os::write_file_atomic(path("snapshot.json"), root.dump() + "\n");
}

std::vector<std::string> StateStore::inbox_files() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(path("inbox"), ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || it->path().extension() != ".json") continue;
    std::error_code ec2;
    if (fs::is_regular_file(it->path(), ec2)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string StateStore::write_inbox(const json& request) const {
  os::make_dirs(path("inbox"));
  std::string name = inbox_name();
  os::write_file_atomic(
      path("inbox/" + name),
      dump_document("ControllerRequest", {{"generator", "sia-ctl"}}, request, false) + "\n");
  return name;
}

json StateStore::read_inbox(const std::string& name) const {
  std::string file = path("inbox/" + name);
  Document d = read_document(file, {"ControllerRequest"});
  Node data = d.data();
  data.at("type").one_of({"submit", "cancel", "hold", "release", "requeue"});
  // Typed as the readers expect them (65 naming the field otherwise).
  data.string_or("identity", "");
  data.number_or("time", 0);
  data.at("jobs").each([](const Node&) {});
  return data.json();
}

void StateStore::remove_inbox(const std::string& name) const {
  std::string p = path("inbox/" + name);
  if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
    throw Error(ExitStatus::io, p + ": cannot remove: " + std::strerror(errno));
  }
}

void StateStore::reject_inbox(const std::string& name) const {
  os::make_dirs(path("inbox/rejected"));
  std::string from = path("inbox/" + name), to = path("inbox/rejected/" + name);
  if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) {
    throw Error(ExitStatus::io, from + ": cannot move to " + to + ": " + std::strerror(errno));
  }
}

std::string StateStore::round_file(std::int64_t round, const std::string& suffix) const {
  return path("rounds/" + round_document_name(round, suffix));
}

void StateStore::save_round(std::int64_t round,
                            const std::vector<std::pair<std::string, std::string>>& files) const {
  os::make_dirs(path("rounds"));
  save_round_documents(path("rounds"), round, files, os::kPrivateFile);
}

namespace {

// The round number of a file "rNNNNNN-....json", or -1.
std::int64_t round_of(const std::string& name) {
  auto dash = name.find('-');
  if (name.empty() || name[0] != 'r' || dash == std::string::npos || dash < 2 || dash > 13) {
    return -1;
  }
  std::string digits = name.substr(1, dash - 1);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoll(digits);
}

}  // namespace

std::vector<std::int64_t> StateStore::saved_rounds() const {
  std::vector<std::int64_t> out;
  std::error_code ec;
  for (fs::directory_iterator it(path("rounds"), ec), end; !ec && it != end; it.increment(ec)) {
    if (auto r = round_of(it->path().filename().string()); r >= 0) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void StateStore::prune_rounds(std::int64_t current, int retention) const {
  std::vector<fs::path> old;
  std::error_code ec;
  for (fs::directory_iterator it(path("rounds"), ec), end; !ec && it != end; it.increment(ec)) {
    auto r = round_of(it->path().filename().string());
    if (r >= 0 && r <= current - retention) old.push_back(it->path());
  }
  for (const auto& p : old) {
    std::error_code ec2;
    fs::remove(p, ec2);
  }
}

json inbox_request(const std::string& type, const std::string& identity, double time,
                   const json& body) {
  json r = body;
  r["type"] = type;
  r["identity"] = identity;
  r["time"] = time;
  return r;
}

}  // namespace sia::ctl
