#include <catch2/catch.hpp>

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

namespace {

std::vector<json> numbered(std::vector<json> records, std::int64_t first) {
  for (auto& r : records) r["seq"] = first++;
  return records;
}

}  // namespace

TEST_CASE("journal records read back with their checksums checked", "[journal]") {
  TempDir dir;
  Journal j(dir / "journal.jsonl");
  j.append(numbered({{{"type", "a"}, {"x", 1.5}}, {{"type", "b"}, {"s", "é\n\"q\""}}}, 1));
  j.append(numbered({{{"type", "c"}}}, 3));
  JournalRead r = read_journal(j.path());
  REQUIRE(r.records.size() == 3);
  CHECK(r.records[0]["x"] == 1.5);
  CHECK(r.records[1]["s"] == "é\n\"q\"");
  CHECK(r.records[2]["seq"] == 3);
  CHECK(!r.records[0].contains("crc"));
  CHECK(r.warnings.empty());
  CHECK(read_journal(dir / "none.jsonl").records.empty());
}

TEST_CASE("a torn last line is dropped with a warning and cut by a writer", "[journal]") {
  TempDir dir;
  StateStore store(dir / "state");
  store.create();
  JobBook book;
  store.commit(book, {make_node_seen("n1", true, "", 100), make_node_seen("n2", false, "x", 100)});
  // kill -9 in the middle of the next append: half a line, no newline.
  std::string journal = store.path("journal.jsonl");
  std::string good = slurp(journal);
  write_text(journal, good + "{\"crc\":\"0badf00d\",\"seq\":3,\"type\":\"node-s");

  std::vector<std::string> warnings;
  JobBook reader = store.load(false, &warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == journal + ": line 3: incomplete last record (cut by a crash before it " +
                           "was acknowledged); ignored");
  CHECK(reader.seq() == 2);
  CHECK(reader.nodes().at("n2").up == false);
  CHECK(slurp(journal).size() > good.size());  // a reader leaves it

  warnings.clear();
  JobBook writer = store.load(true, &warnings);
  CHECK(warnings.size() == 1);
  CHECK(slurp(journal) == good);  // cut to the last complete record
  store.commit(writer, {make_node_seen("n2", true, "", 160)});
  warnings.clear();
  JobBook again = store.load(true, &warnings);
  CHECK(warnings.empty());
  CHECK(again.seq() == 3);
  CHECK(again.nodes().at("n2").up);
}

TEST_CASE("a corrupted journal line is an error and the file is left alone", "[journal]") {
  TempDir dir;
  StateStore store(dir / "state");
  store.create();
  JobBook book;
  store.commit(book, {make_node_seen("n1", true, "", 100), make_node_seen("n2", true, "", 100),
                      make_node_seen("n3", true, "", 100)});
  std::string journal = store.path("journal.jsonl");
  std::string text = slurp(journal);

  SECTION("a changed value") {
    auto at = text.find("\"n2\"");
    text.replace(at, 4, "\"n9\"");
    write_text(journal, text);
    auto e = sia::test::error_of([&] { store.load(true, nullptr); });
    CHECK(e.first == 65);
    CHECK(e.second == journal + ": line 2: corrupted (checksum mismatch); the file is left as it " +
                          "is for inspection");
  }
  SECTION("a line that is not JSON") {
    auto at = text.find('\n');
    text.insert(at + 1, "garbage\n");
    write_text(journal, text);
    auto e = sia::test::error_of([&] { store.load(true, nullptr); });
    CHECK(e.first == 65);
    CHECK(e.second.find(journal + ": line 2: corrupted (not a JSON object)") == 0);
  }
  SECTION("a record missing") {
    auto first = text.find('\n');
    auto second = text.find('\n', first + 1);
    text.erase(first + 1, second - first);
    write_text(journal, text);
    auto e = sia::test::error_of([&] { store.load(true, nullptr); });
    CHECK(e.first == 65);
    CHECK(e.second.find("line 2: corrupted (sequence 3 after 1)") != std::string::npos);
  }
  CHECK(slurp(journal) == text);  // untouched by the failed load
}

TEST_CASE("a snapshot with a bad checksum is an error and is left alone", "[journal]") {
  TempDir dir;
  StateStore store(dir / "state");
  store.create();
  JobBook book;
  store.commit(book, {make_submit("f1", "local:me", 10, {ct::spec("a")})});
  store.compact(book);
  CHECK(slurp(store.path("journal.jsonl")).empty());
  JobBook back = store.load(true, nullptr);
  CHECK(back.seq() == 1);
  REQUIRE(back.find("a"));
  CHECK(back.find("a")->identity == "local:me");

  std::string snap = store.path("snapshot.json");
  std::string text = slurp(snap);
  auto at = text.find("local:me");
  text.replace(at, 8, "local:yo");
  write_text(snap, text);
  auto e = sia::test::error_of([&] { store.load(true, nullptr); });
  CHECK(e.first == 65);
  CHECK(e.second.find(snap + ": corrupted (checksum mismatch: recorded crc32:") == 0);
  CHECK(slurp(snap) == text);
  write_text(snap, "{\"apiVersion\": \"sia/v1\", \"kind\": \"Contr");
  e = sia::test::error_of([&] { store.load(false, nullptr); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        snap + ": corrupted (not a JSON document); the file is left as it is for " + "inspection");
}

TEST_CASE("records already in the snapshot are skipped when replaying", "[journal]") {
  // A crash between writing the snapshot and emptying the journal.
  TempDir dir;
  StateStore store(dir / "state");
  store.create();
  JobBook book;
  store.commit(book, {make_submit("f1", "local:me", 10, {ct::spec("a")})});
  std::string journal = slurp(store.path("journal.jsonl"));
  store.compact(book);
  write_text(store.path("journal.jsonl"), journal);
  store.commit(book, {make_job_request(JobRequest::cancel, "f2", "local:me", 20, {"a"})});
  JobBook back = store.load(true, nullptr);
  CHECK(back.seq() == 2);
  CHECK(back.find("a")->state == Lifecycle::cancelled);
}

TEST_CASE("the state lock makes a second holder fail with 75", "[journal]") {
  TempDir dir;
  StateStore store(dir / "state");
  auto lock = store.lock("test");
  auto e = sia::test::error_of([&] { store.lock("sia-ctl round"); });
  CHECK(e.first == 75);
  CHECK(e.second.find("round lock held by pid " + std::to_string(::getpid()) + " (test); " +
                      "retry later") != std::string::npos);
}

TEST_CASE("whom a job runs as is journaled with it; older records without it still load",
          "[journal]") {
  TempDir dir;
  StateStore store(dir / "state");
  store.create();
  JobBook book;
  const sia::RunAs alice{"alice", "client:alice", false};
  store.commit(book, {make_submit("f1", "client:alice (key K)", 10, {ct::spec("a")}, {}, alice),
                      make_submit("f2", "local:me", 11, {ct::spec("b")})});
  JobBook back = store.load(true, nullptr);
  REQUIRE(back.find("a")->run_as);
  CHECK(*back.find("a")->run_as == alice);
  CHECK_FALSE(back.find("b")->run_as);  // a local submission: the node's own user
  // The nodes get it in the job's Jobs state; a job without one gets none.
  CHECK(node_job_json(back, *back.find("a"), "")["state"]["run_as"] ==
        json({{"user", "alice"}, {"submitter", "client:alice"}, {"admin", false}}));
  CHECK_FALSE(node_job_json(back, *back.find("b"), "").contains("state"));
  store.compact(back);  // and through a snapshot
  JobBook again = store.load(true, nullptr);
  CHECK(*again.find("a")->run_as == alice);
  CHECK_FALSE(again.find("b")->run_as);
}
