#include <catch2/catch.hpp>

#include "round/guarantee.hpp"

using namespace sia;

namespace {

GoodputEntry entry(int type, int gpus, double raw) {
  GoodputEntry e;
  e.config = {type, 1, gpus};
  e.raw_goodput = raw;
  e.goodput = raw / 100;
  return e;
}

// 1000 iterations left at b0 = 10: 10000 samples of work.
GoodputRow row_due_in(double seconds) {
  GoodputRow row;
  row.job = "g";
  row.restart_penalty = 0;
  row.progress = JobProgress{0, 1000};
  row.entries = {entry(0, 1, 10), entry(0, 2, 19), entry(0, 4, 36), entry(1, 1, 30),
                 entry(1, 2, 55)};
  mark_deadline(row, JobClass::guaranteed, 100 + seconds, 100);
  return row;
}

}  // namespace

TEST_CASE("a guaranteed row keeps the configurations that stay on schedule", "[deadline]") {
  // 10000 samples in 500 s: 20 samples/s are needed; t4x4 (36), a100x1 (30), a100x2 (55).
  GoodputRow row = row_due_in(500);
  CHECK(row.job_class == JobClass::guaranteed);
  CHECK(*row.deadline_in == 500);
  keep_on_schedule(row, 10);
  REQUIRE(row.entries.size() == 3);
  CHECK(row.entries[0].config.gpus == 4);
  CHECK(row.entries[0].goodput == Approx(0.36 * kGuaranteedBoost));
  CHECK(row.entries[1].config.type == 1);
  // 100 s: 100 samples/s are needed, none reaches it: the fastest type's (a100), boosted.
  row = row_due_in(100);
  keep_on_schedule(row, 10);
  REQUIRE(row.entries.size() == 2);
  CHECK(row.entries[0].config.type == 1);
  CHECK(row.entries[1].goodput == Approx(0.55 * kGuaranteedBoost));
  // No deadline: as it was.
  row = row_due_in(100);
  row.deadline_in.reset();
  keep_on_schedule(row, 10);
  CHECK(row.entries.size() == 5);
}
