#include <catch2/catch.hpp>

#include "slurm/canned_runner.hpp"
#include "slurm/slurm_accounting.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::slurm;
using sia::slurm::test::CannedRunner;
using sia::test::error_of;

TEST_CASE("sacct's Elapsed in all its forms", "[slurm][accounting]") {
  CHECK(parse_elapsed("00:07", "x") == 7);
  CHECK(parse_elapsed("03:07", "x") == 187);
  CHECK(parse_elapsed("01:02:03", "x") == 3723);
  CHECK(parse_elapsed("2-01:02:03", "x") == 2 * 86400 + 3723);
  for (const char* bad : {"", "7", "1:2:3:4", "1-02:03", "00:60", "-01:02:03", "a:b", "01:02:"}) {
    INFO(bad);
    CHECK(error_of([&] { parse_elapsed(bad, "sacct: Elapsed"); }).first == 65);
  }
  CHECK(error_of([] { parse_elapsed("1:x", "line 2: Elapsed"); }).second ==
        "line 2: Elapsed: expected [DD-[HH:]]MM:SS, got \"1:x\"");
}

TEST_CASE("sacct rows: states with their actor, exit codes, heterogeneous jobs",
          "[slurm][accounting]") {
  auto jobs = parse_sacct(
      "17|COMPLETED|00:01:05|0:0\n"
      "18|CANCELLED by 0|00:00:12|0:15\n"
      "19+0|FAILED|1-00:00:01|75:0\n"
      "19+1|FAILED|1-00:00:01|1:0\r\n"
      "\n"
      "20|RUNNING|00:03|0:0\n");
  REQUIRE(jobs.size() == 4);
  CHECK(jobs[17] == AccountedJob{17, "COMPLETED", 65, 0, 0});
  CHECK(jobs[18] == AccountedJob{18, "CANCELLED", 12, 0, 15});
  CHECK(jobs[19] == AccountedJob{19, "FAILED", 86401, 75, 0});  // the first component's
  CHECK(jobs[20].elapsed == 3);
  CHECK(parse_sacct("").empty());
}

TEST_CASE("malformed sacct output is one line naming the line and the field",
          "[slurm][accounting]") {
  CHECK(error_of([] { parse_sacct("17|COMPLETED|00:01\n"); }).second ==
        "slurm: sacct: line 1: expected JobID|State|Elapsed|ExitCode, got 3 fields");
  CHECK(error_of([] { parse_sacct("17|COMPLETED|00:01|0:0\nx|RUNNING|00:01|0:0"); }).second ==
        "slurm: sacct: line 2: JobID: expected a job id");
  CHECK(error_of([] { parse_sacct("17|COMPLETED|00:01|0"); }).second ==
        "slurm: sacct: line 1 (job 17): ExitCode: expected STATUS:SIGNAL");
  CHECK(error_of([] { parse_sacct("17||00:01|0:0"); }).second ==
        "slurm: sacct: line 1 (job 17): State: expected a Slurm job state (A-Z and _)");
  // Bytes that are not text never reach history's JSON (found by fuzz/slurm_records).
  CHECK(error_of([] { parse_sacct("18|\xbd\xf3\x0c|00:01|0:0"); }).second ==
        "slurm: sacct: line 1 (job 18): State: expected a Slurm job state (A-Z and _)");
  CHECK(error_of([] { parse_sacct("17|RUNNING|00:01|999:0"); }).first == 65);
  CHECK(error_of([] { parse_sacct("99999999999|RUNNING|00:01|0:0"); }).first == 65);
}

TEST_CASE("read_accounting: one sacct for all ids; no accounting is a note, never a throw",
          "[slurm][accounting]") {
  CannedRunner f;
  f.out = "17|COMPLETED|00:01:05|0:0\n";
  auto a = read_accounting(f, {17, 21});
  REQUIRE(f.calls.size() == 1);
  CHECK(f.calls[0] == sacct_args({17, 21}));
  CHECK(f.calls[0] == std::vector<std::string>{"sacct", "-X", "-n", "-P", "-j", "17,21", "-o",
                                               "JobID,State,Elapsed,ExitCode"});
  CHECK(a.available);
  CHECK(a.note.empty());
  CHECK(a.jobs.size() == 1);

  CannedRunner none;
  CHECK(read_accounting(none, {}).available);
  CHECK(none.calls.empty());  // nothing to ask

  CannedRunner off;
  off.status = 1;
  off.err = "Slurm accounting storage is disabled\n";
  a = read_accounting(off, {17});
  CHECK_FALSE(a.available);
  CHECK(a.note ==
        "Slurm keeps no accounting here (sacct: accounting storage is disabled): no Slurm figures");

  CannedRunner down;
  down.status = 1;
  down.err = "sacct: error: slurmdbd: Connection refused\nmore\n";
  CHECK(read_accounting(down, {17}).note ==
        "sacct failed (sacct: error: slurmdbd: Connection refused): no Slurm figures");

  CannedRunner garbled;
  garbled.out = "17|COMPLETED\n";
  a = read_accounting(garbled, {17});
  CHECK_FALSE(a.available);
  CHECK(a.note ==
        "slurm: sacct: line 1: expected JobID|State|Elapsed|ExitCode, got 2 fields: "
        "no Slurm figures");
}
