#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "ctl/client_render.hpp"
#include "ctl/job_log.hpp"
#include "ctl_test_util.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;
using nlohmann::json;
namespace ct = sia::ctl::test;

namespace {

// Job a on t4-0 (GPUs 0,1: ranks 0-1) and t4-1 (GPU 0: rank 2).
JobBook book_with_placed_job() {
  JobBook book;
  book.apply(make_submit("f", "local:me", 100, {ct::spec("a"), ct::spec("b")}));
  book.apply(ct::placing_round(1, 160, "a", {{"t4-0", {0, 1}}, {"t4-1", {0}}}));
  return book;
}

}  // namespace

TEST_CASE("a rank's log is on the node that holds the rank", "[job_log]") {
  JobBook book = book_with_placed_job();
  CHECK(locate_rank_log(book, {}, {"a", 0}).node == "t4-0");
  CHECK(locate_rank_log(book, {}, {"a", 1}).node == "t4-0");
  CHECK(locate_rank_log(book, {}, {"a", 2}).node == "t4-1");
  CHECK(locate_rank_log(book, {}, {"a", 2}).state == Lifecycle::running);
  // After it ended, the placement it last ran with still says where.
  book.apply(make_job_ended("a", Lifecycle::failed, "failed on t4-1: exit 3", 3, 200));
  CHECK(locate_rank_log(book, {}, {"a", 2}).node == "t4-1");
  CHECK(locate_rank_log(book, {}, {"a", 2}).state == Lifecycle::failed);
}

TEST_CASE("logs refusals: unknown job, never started, rank out of range, node down", "[job_log]") {
  JobBook book = book_with_placed_job();
  CHECK(sia::test::error_of([&] { locate_rank_log(book, {}, {"zz", 0}); }).first == 66);
  CHECK(sia::test::error_of([&] {
          locate_rank_log(book, {}, {"b", 0});
        }).first == 66);  // never placed
  PendingRequest p{"submit", "local:me", 1, {"c"}, {}, {}};
  CHECK(sia::test::error_of([&] { locate_rank_log(book, {p}, {"c", 0}); }).first == 66);
  CHECK(sia::test::error_of([&] { locate_rank_log(book, {}, {"a", 3}); }).first == 64);
  try {
    locate_rank_log(book, {}, {"a", 3});
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "rank 3 is out of range: job \"a\" has ranks 0-2");
  }
  book.apply(make_node_seen("t4-1", false, "timed out", 300));
  CHECK(sia::test::error_of([&] { locate_rank_log(book, {}, {"a", 2}); }).first == 69);
  CHECK(sia::test::error_of([&] { locate_rank_log(book, {}, {"a", 0}); }).first == 0);
}

TEST_CASE("sia-run logs arguments and the JobLog document", "[job_log]") {
  CHECK(sia_run_log_args({"a", 2, 20, 0}) ==
        std::vector<std::string>{"a", "--rank", "2", "--tail", "20", "-o", "json"});
  CHECK(sia_run_log_args({"a", 0, -1, 77}) ==
        std::vector<std::string>{"a", "--rank", "0", "--offset", "77", "-o", "json"});
  json doc = job_log_document({"a", 1, -1, 0}, RankLogSource{"t4-0", Lifecycle::running, false, ""},
                              {{"offset", 0}, {"next", 3}, {"size", 3}, {"text", "hi\n"}});
  CHECK(doc["kind"] == "JobLog");
  CHECK(doc["data"]["node"] == "t4-0");
  CHECK(doc["data"]["state"] == "running");
  CHECK(doc["data"]["next"] == 3);
  CHECK(doc["data"]["text"] == "hi\n");
}

TEST_CASE("a failed job keeps its log tail, through a snapshot, into explain", "[job_log]") {
  JobBook book = book_with_placed_job();
  LogTail tail{"t4-1", 2, "step 1\nboom\n"};
  json r = make_job_ended("a", Lifecycle::failed, "failed on t4-1: exit 3", 3, 200, tail);
  CHECK(r["log_tail"]["rank"] == 2);
  CHECK_FALSE(make_job_ended("b", Lifecycle::failed, "x", 1, 200).contains("log_tail"));
  CHECK(book.apply(r));
  REQUIRE(book.find("a")->log_tail);
  CHECK(book.find("a")->log_tail->text == "step 1\nboom\n");
  JobBook back = JobBook::from_json(book.to_json(), "snapshot.json");
  REQUIRE(back.find("a")->log_tail);
  CHECK(back.find("a")->log_tail->node == "t4-1");
  json doc = job_explanation(back, {}, "a", 300, 120, 3);
  CHECK(doc["data"]["log_tail"]["rank"] == 2);
  std::string text = render_table(doc, 300);
  CHECK(text.find("the last lines of rank 2's log on t4-1:\n    | step 1\n    | boom\n") !=
        std::string::npos);
  CHECK_FALSE(log_tail_from_json(json{{"rank", -1}}));
  CHECK_FALSE(log_tail_from_json(nullptr));
}
