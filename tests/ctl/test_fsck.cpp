#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "channel/lease_memory.hpp"
#include "core/cluster.hpp"
#include "ctl/fsck.hpp"
#include "ctl/journal.hpp"
#include "ctl/state_store.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
using sia::ctl::test::slurp;
using sia::ctl::test::TempDir;
using sia::ctl::test::write_text;
namespace ct = sia::ctl::test;
namespace fs = std::filesystem;

namespace {

constexpr double kNow = 1796083200;  // 2026-12-01T00:00:00Z
const std::string kStamp = ".damaged-2026-12-01T00:00:00Z";

// A state directory whose journal holds five records: jobs a, b, c submitted, nodes n1, n2
// seen.
struct Fixture {
  TempDir dir;
  StateStore store{dir / "state"};
  std::string journal = store.path("journal.jsonl");
  std::string snapshot = store.path("snapshot.json");
  Fixture() {
    store.create();
    JobBook book;
    store.commit(book, {make_submit("f1", "local:me", 10, {ct::spec("a")}),
                        make_submit("f2", "local:me", 11, {ct::spec("b")}),
                        make_submit("f3", "local:me", 12, {ct::spec("c")}),
                        make_node_seen("n1", true, "", 100), make_node_seen("n2", true, "", 100)});
  }
  // The byte offset of line `n` (1-based) of the journal.
  std::size_t line_start(int n) const {
    std::string text = slurp(journal);
    std::size_t pos = 0;
    for (int i = 1; i < n; ++i) pos = text.find('\n', pos) + 1;
    return pos;
  }
};

}  // namespace

TEST_CASE("fsck finds nothing wrong in an intact state directory", "[fsck]") {
  Fixture f;
  JobBook book = f.store.load(true, nullptr);
  f.store.compact(book);
  f.store.commit(book, {make_node_seen("n3", true, "", 200)});
  f.store.write_inbox(inbox_request("cancel", "local:me", 300, {{"jobs", {"a"}}}));
  FsckReport r = fsck(f.store, true, kNow);
  CHECK(r.clean());
  CHECK(!r.repaired);  // nothing to repair: nothing written
  CHECK(r.moved.empty());
  CHECK(r.journal_lines == 1);
  CHECK(r.journal_intact == 1);
  CHECK(r.snapshot_seq == 5);
  CHECK(r.inbox_files == 1);
  CHECK(fsck_to_json(r)["clean"] == true);
  CHECK(fsck_table(r).find(f.store.root() + ": clean; journal: 1 of 1 records intact") == 0);
}

TEST_CASE("fsck: a torn tail is reported, and a repair cuts it", "[fsck]") {
  Fixture f;
  const std::string good = slurp(f.journal);
  write_text(f.journal, good + "{\"crc\":\"0badf00d\",\"seq\":6,\"type\":\"node-s");
  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].file == f.journal);
  CHECK(r.problems[0].line == 6);
  CHECK(r.problems[0].offset == static_cast<std::int64_t>(good.size()));
  CHECK(r.problems[0].what.find("incomplete last record") == 0);
  CHECK(r.journal_intact == 5);
  CHECK(fsck_table(r).find(f.journal + ": line 6 (byte " + std::to_string(good.size()) +
                           "): incomplete last record") == 0);

  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  REQUIRE(fixed.moved == std::vector<std::string>{f.journal + kStamp});
  CHECK(slurp(f.journal + kStamp).size() > good.size());  // the original, kept aside
  CHECK(slurp(f.journal).empty());
  JobBook back = f.store.load(true, nullptr);
  CHECK(back.seq() == 5);
  CHECK(back.find("c"));
  CHECK(back.nodes().count("n2"));
  CHECK(fsck(f.store, false, kNow).clean());
}

TEST_CASE("fsck: a flipped byte mid-journal drops that record alone, naming it", "[fsck]") {
  Fixture f;
  std::string text = slurp(f.journal);
  const std::size_t at = text.find("\"b\"");  // job b's name, in record 2
  text[at + 1] = 'x';
  write_text(f.journal, text);
  REQUIRE(sia::test::error_of([&] { f.store.load(true, nullptr); }).first == 65);

  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].line == 2);
  CHECK(r.problems[0].offset == static_cast<std::int64_t>(f.line_start(2)));
  CHECK(r.problems[0].what == "corrupted (checksum mismatch)");
  CHECK(r.problems[0].lost == "record 2 (submit: x)");
  CHECK(r.journal_lines == 5);
  CHECK(r.journal_intact == 4);
  CHECK(slurp(f.journal) == text);  // a check changes nothing

  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  REQUIRE(fixed.warnings.size() == 1);
  CHECK(fixed.warnings[0] == f.journal + ": line 2: dropped record 2 (submit: x)");
  CHECK(slurp(f.journal + kStamp) == text);
  // Every intact record is kept, in order, and the controller loads and goes on.
  JobBook back = f.store.load(true, nullptr);
  CHECK(back.seq() == 5);
  CHECK(back.find("a"));
  CHECK(!back.find("b"));
  CHECK(back.find("c"));
  CHECK(back.nodes().count("n1"));
  CHECK(back.nodes().count("n2"));
  f.store.commit(back, {make_node_seen("n3", true, "", 200)});
  CHECK(f.store.load(true, nullptr).seq() == 6);
  CHECK(fsck(f.store, false, kNow).clean());
}

TEST_CASE("fsck: a line that is not JSON and a record out of order", "[fsck]") {
  Fixture f;
  std::string text = slurp(f.journal);
  SECTION("garbage between records") {
    text.insert(f.line_start(3), "garbage\n");
    write_text(f.journal, text);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].line == 3);
    CHECK(r.problems[0].what == "corrupted (not a JSON object)");
    CHECK(r.problems[0].lost == "7 bytes that are not a JSON record");
    CHECK(r.journal_intact == 5);
  }
  SECTION("a record repeated") {
    text += text.substr(f.line_start(2), f.line_start(3) - f.line_start(2));
    write_text(f.journal, text);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].line == 6);
    CHECK(r.problems[0].what == "sequence 2 after 5 (a repeated or out-of-order record)");
  }
  SECTION("a record missing") {
    text.erase(f.line_start(2), f.line_start(3) - f.line_start(2));
    write_text(f.journal, text);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].line == 2);
    CHECK(r.problems[0].what == "sequence 3, but the book ends at 1 (records 2..2 are missing)");
  }
  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  CHECK(f.store.load(true, nullptr).find("c"));
}

TEST_CASE("fsck: intact records the controller never writes: type, names, time", "[fsck]") {
  Fixture f;
  JobBook book = f.store.load(true, nullptr);
  f.store.commit(book, {json{{"type", "mystery"}, {"time", 1}},
                        make_node_seen("-oProxyCommand=x", true, "", 200),
                        make_job_silent("../a", 5, 300), make_node_seen("n3", true, "", 1e300),
                        json{{"type", "cancel"}, {"time", 1}, {"jobs", {"a", "--all"}}},
                        make_node_seen("n4", true, "", 400)});
  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 5);
  CHECK(r.problems[0].line == 6);
  CHECK(r.problems[0].what == "a record type this build does not know (\"mystery\")");
  CHECK(r.problems[1].what ==
        "node: expected a name of letters, digits, '.', '_' or '-', not starting with '.' or "
        "'-', got \"-oProxyCommand=x\"");
  CHECK(r.problems[2].what.rfind("job: expected a name of ", 0) == 0);
  CHECK(r.problems[3].what == "time: expected seconds from 0 to 1e11, got 1e+300");
  CHECK(r.problems[4].what.rfind("jobs: expected names of ", 0) == 0);
  CHECK(r.problems[4].lost == "record 10 (cancel: a, --all)");
  CHECK(r.journal_intact == 6);  // the five of the fixture, and n4 seen
  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  CHECK(fsck(f.store, false, kNow).clean());
}

TEST_CASE("fsck: a bad snapshot is moved aside, the journal's records kept", "[fsck]") {
  Fixture f;
  JobBook book = f.store.load(true, nullptr);
  f.store.compact(book);
  f.store.commit(book, {make_submit("f4", "local:me", 20, {ct::spec("d")})});
  std::string snap = slurp(f.snapshot);
  snap.replace(snap.find("local:me"), 8, "local:yo");
  write_text(f.snapshot, snap);

  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 1);
  CHECK(r.problems[0].file == f.snapshot);
  CHECK(r.problems[0].what.find("corrupted (checksum mismatch: recorded crc32:") == 0);
  CHECK(r.snapshot_seq == -1);
  CHECK(fsck_to_json(r)["checked"]["snapshot_seq"].is_null());

  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  CHECK(fixed.moved == std::vector<std::string>{f.snapshot + kStamp});
  CHECK(slurp(f.snapshot + kStamp) == snap);
  JobBook back = f.store.load(true, nullptr);
  CHECK(back.seq() == 6);
  CHECK(back.find("d"));
  CHECK(!back.find("a"));  // it was in the snapshot only
}

TEST_CASE("fsck: a malformed inbox file and a damaged round document", "[fsck]") {
  Fixture f;
  const std::string good =
      f.store.write_inbox(inbox_request("cancel", "local:me", 300, {{"jobs", {"a"}}}));
  const std::string bad = f.store.path("inbox/00000000000000000001-1-0.json");
  write_text(bad,
             "{\"apiVersion\": \"sia/v1\", \"kind\": \"ControllerRequest\", \"data\": "
             "{\"type\": \"launch\"}}\n");
  f.store.save_round(1, {{"cluster", "{\"apiVersion\": \"sia/v1\", \"kind\": \"Cluster\"\n"}});
  const std::string round = f.store.round_file(1, "cluster");

  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 2);
  CHECK(r.problems[0].file == bad);
  CHECK(r.problems[0].what.find("type") != std::string::npos);
  CHECK(r.problems[1].file == round);
  CHECK(r.inbox_files == 2);
  CHECK(r.round_files == 1);
  json doc = fsck_to_json(r);
  CHECK(doc["problems"].size() == 2);
  CHECK(doc["problems"][0]["file"] == bad);
  CHECK(!doc["problems"][0].contains("line"));

  FsckReport fixed = fsck(f.store, true, kNow);
  CHECK(fixed.repaired);
  CHECK(fs::exists(bad + kStamp));
  CHECK(fs::exists(round + kStamp));
  CHECK(f.store.inbox_files() == std::vector<std::string>{good});
  CHECK(fsck(f.store, false, kNow).clean());
}

TEST_CASE("fsck: profile stores, kept and current", "[fsck]") {
  Fixture f;
  const std::string profile =
      "{\"apiVersion\": \"sia/v1\", \"kind\": \"Profile\", \"data\": {\"model\": \"cifar10\", "
      "\"points\": []}}\n";
  // A round's store is JSON Lines (or empty): intact.
  f.store.save_round(1, {{"profiles", ""}});
  f.store.save_round(2, {{"profiles", profile + profile}});  // a model twice: damaged
  write_text(f.store.path("profiles.json"), profile + "{\"kind\": \"Profile\"\n");
  FsckReport r = fsck(f.store, false, kNow);
  REQUIRE(r.problems.size() == 2);
  CHECK(r.problems[0].file == f.store.round_file(2, "profiles"));
  CHECK(r.problems[0].what.find("given twice") != std::string::npos);
  CHECK(r.problems[1].file == f.store.path("profiles.json"));
  CHECK(fsck(f.store, true, kNow).repaired);
  CHECK(!fs::exists(f.store.path("profiles.json")));  // set aside: later jobs measure again
  CHECK(fsck(f.store, false, kNow).clean());
}

TEST_CASE("fsck: leases.json, intact, with a node the cluster does not have", "[fsck][lease]") {
  Fixture f;
  const std::string leases = f.store.path(kLeasesFile);
  const Cluster cluster = read_cluster(ct::write_cluster(f.dir));  // t4-0, t4-1
  write_text(leases, channel::leases_document(
                         {{"t4-0", channel::Lease{30, 610}}, {"gone", channel::Lease{30, 30}}}));
  FsckReport r = fsck(f.store, false, kNow, &cluster);
  CHECK(r.clean());
  CHECK(r.lease_nodes == 2);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find(leases + ": node gone is not in the cluster") == 0);
  CHECK(fsck_to_json(r)["checked"]["lease_nodes"] == 2);
  CHECK(fsck_table(r).find("warning: " + leases + ": node gone") == 0);
  CHECK(fsck_table(r).find("leases of 2 node(s)") != std::string::npos);
  // No cluster configured: not checked. A repair of a clean directory moves nothing.
  CHECK(fsck(f.store, false, kNow).warnings.empty());
  FsckReport again = fsck(f.store, true, kNow, &cluster);
  CHECK(again.moved.empty());
  CHECK(fs::exists(leases));
}

TEST_CASE("fsck: a damaged leases.json names the file and field; a repair sets it aside",
          "[fsck][lease]") {
  Fixture f;
  const std::string leases = f.store.path(kLeasesFile);
  const std::string head = R"({"apiVersion":"sia/v1","kind":"NodeLeases","data":{"nodes":)";
  struct Case {
    std::string text, said;
  };
  for (const auto& c :
       std::vector<Case>{{"{not json", ""},
                         {R"({"apiVersion":"sia/v1","kind":"Jobs","data":{}})", "NodeLeases"},
                         {head + R"([]}})", "nodes: expected an object of leases by node"},
                         {head + R"({"t4-0":{"fence_after":30,"grace":-1}}}})",
                          "nodes.t4-0.grace: expected a number >= 0"},
                         {head + R"({"t4-0":{"fence_after":-30,"grace":1}}}})",
                          "nodes.t4-0.fence_after: expected a positive number"},
                         {head + R"({"t4-0":{"fence_after":1e400,"grace":1}}}})", ""},
                         {head + R"({"t4-0":{"fence_after":30}}}})", "grace"},
                         {head + R"({"../x":{"fence_after":30,"grace":1}}}})",
                          "nodes: \"../x\" cannot name a node"}}) {
    CAPTURE(c.text);
    write_text(leases, c.text);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].file == leases);
    CHECK(r.problems[0].what.find(c.said) != std::string::npos);
    CHECK(r.problems[0].what.find(leases) == std::string::npos);  // named once, as the file
    CHECK(r.problems[0].lost.find("assumed lease") != std::string::npos);
    CHECK(slurp(leases) == c.text);  // a check changes nothing

    FsckReport fixed = fsck(f.store, true, kNow);
    CHECK(fixed.repaired);
    REQUIRE(fixed.moved.size() == 1);
    CHECK(slurp(fixed.moved[0]) == c.text);
    CHECK(!fs::exists(leases));  // the next READY writes it anew
    CHECK(fsck(f.store, false, kNow).clean());
    fs::remove(fixed.moved[0]);
  }
}

TEST_CASE("fsck: leases.json as a symbolic link or a FIFO is a problem, never followed",
          "[fsck][lease]") {
  Fixture f;
  const std::string leases = f.store.path(kLeasesFile);
  // What an attacker would point it at: a file the controller must neither read as its
  // leases nor move, and one that would hang a reader.
  const std::string target = f.dir / "elsewhere.json";
  const std::string text = channel::leases_document({{"t4-0", channel::Lease{30, 610}}});
  write_text(target, text);
  SECTION("a symbolic link") {
    fs::create_symlink(target, leases);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].what == "refused: a symbolic link");
    CHECK(r.lease_nodes == 0);
    FsckReport fixed = fsck(f.store, true, kNow);
    CHECK(fixed.repaired);
    REQUIRE(fixed.moved.size() == 1);
    CHECK(fs::is_symlink(fixed.moved[0]));  // the link itself set aside
    CHECK(slurp(target) == text);           // what it pointed at untouched
  }
  SECTION("a FIFO") {
    REQUIRE(::mkfifo(leases.c_str(), 0600) == 0);
    FsckReport r = fsck(f.store, false, kNow);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].what == "refused: not a regular file");
    CHECK(fsck(f.store, true, kNow).repaired);
  }
  CHECK(!fs::exists(fs::symlink_status(leases)));
  CHECK(fsck(f.store, false, kNow).clean());
}
