#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/error.hpp"
#include "exec/rank_log.hpp"
#include "temp_dir.hpp"
#include "test_util.hpp"

using namespace sia::exec;
using sia::exec::test::TempDir;

namespace {
void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}
}  // namespace

TEST_CASE("a log's last lines, with or without a final newline", "[rank_log]") {
  TempDir dir;
  const std::string log = dir / "rank-0.log";
  write(log, "a\nb\nc\n");
  LogChunk c = read_log_tail(log, 2, kMaxLogRead);
  CHECK(c.text == "b\nc\n");
  CHECK(c.offset == 2);
  CHECK(c.next == 6);
  CHECK(c.size == 6);
  CHECK_FALSE(c.truncated);
  CHECK(read_log_tail(log, 9, kMaxLogRead).text == "a\nb\nc\n");
  CHECK(read_log_tail(log, 0, kMaxLogRead).text.empty());
  CHECK(read_log_tail(log, 0, kMaxLogRead).next == 6);
  write(log, "\na\nb");  // an empty first line, a last line still being written
  CHECK(read_log_tail(log, 1, kMaxLogRead).text == "b");
  CHECK(read_log_tail(log, 5, kMaxLogRead).text == "\na\nb");
}

TEST_CASE("a tail is bounded in bytes and starts at a whole line", "[rank_log]") {
  TempDir dir;
  const std::string log = dir / "rank-0.log";
  write(log, "0123456789\nabc\nxyz\n");
  LogChunk c = read_log_tail(log, 10, 9);  // the window "\nabc\nxyz\n" minus its cut line
  CHECK(c.text == "abc\nxyz\n");
  CHECK(c.truncated);
  CHECK(c.offset == 11);
  LogChunk one = read_log_tail(log, 10, 3);  // no whole line fits: the bytes as they are
  CHECK(one.text == "yz\n");
}

TEST_CASE("a log read from an offset, in pieces", "[rank_log]") {
  TempDir dir;
  const std::string log = dir / "rank-0.log";
  write(log, "hello world\n");
  LogChunk a = read_log_from(log, 0, 5);
  CHECK(a.text == "hello");
  CHECK(a.next == 5);
  CHECK(a.truncated);
  LogChunk b = read_log_from(log, a.next, kMaxLogRead);
  CHECK(b.text == " world\n");
  CHECK_FALSE(b.truncated);
  CHECK(read_log_from(log, 1000, 10).text.empty());
  CHECK(read_log_from(log, 1000, 10).next == 12);
  CHECK(sia::test::error_of([&] { read_log_from(dir / "none.log", 0, 1); }).first == 66);
}

TEST_CASE("a log replaced by a link or a FIFO is refused, never read through", "[rank_log]") {
  TempDir dir;
  write(dir / "other", "not the log\n");
  REQUIRE(::symlink((dir / "other").c_str(), (dir / "rank-0.log").c_str()) == 0);
  auto e = sia::test::error_of([&] { read_log_tail(dir / "rank-0.log", 5, kMaxLogRead); });
  CHECK(e.first == 77);
  CHECK(e.second == dir / "rank-0.log" + ": refused: a symbolic link");
  CHECK(sia::test::error_of([&] { read_log_from(dir / "rank-0.log", 0, 9); }).first == 77);
  REQUIRE(::mkfifo((dir / "rank-1.log").c_str(), 0600) == 0);  // no writer: would block
  CHECK(sia::test::error_of([&] { read_log_from(dir / "rank-1.log", 0, 9); }).second ==
        dir / "rank-1.log" + ": refused: not a regular file");
}

TEST_CASE("invalid UTF-8 is replaced, valid text kept", "[rank_log]") {
  CHECK(valid_utf8("ok \xC3\xA9 \xE2\x82\xAC") == "ok \xC3\xA9 \xE2\x82\xAC");
  CHECK(valid_utf8("a\xFF"
                   "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(valid_utf8("\xC3") == "\xEF\xBF\xBD");
  CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("a failed job's failing rank is the lowest that failed on its own", "[rank_log]") {
  JobStatus s;
  s.ranks = {RankStatus{0, 1, ProcessExit::exited(75), true},
             RankStatus{1, 2, ProcessExit::exited(0), false},
             RankStatus{2, 3, ProcessExit::exited(3), false},
             RankStatus{3, 4, ProcessExit::killed(9), false}};
  CHECK(s.failing_rank() == 2);
  s.ranks[2].exit = ProcessExit::exited(0);
  CHECK(s.failing_rank() == 3);
  s.ranks[3].exit.reset();
  CHECK_FALSE(s.failing_rank());
}
