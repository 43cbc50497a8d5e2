#include <catch2/catch.hpp>

#include "deadline/row_table.hpp"

using namespace sia;
using namespace sia::deadline;

namespace {

// Two types: t4 (2 nodes x 4 GPUs) and a100 (1 node x 2 GPUs).
Cluster two_types() {
  Cluster c;
  c.types = {{"t4", "", 16, 4, 2}, {"a100", "", 40, 2, 1}};
  return c;
}

GoodputEntry entry(int type, int gpus, double raw) {
  GoodputEntry e;
  e.config = {type, 1, gpus};
  e.raw_goodput = raw;
  return e;
}

}  // namespace

TEST_CASE("the admission table read off a row", "[deadline]") {
  const Cluster c = two_types();
  GoodputRow row;
  row.progress = JobProgress{100, 1100};
  // The row's own configurations, the best of each (type, count): t4 x 2 on one node (60
  // samples/s) and on two (50) is one entry at 60.
  GoodputEntry spread = entry(0, 2, 50);
  spread.config.nodes = 2;
  row.entries = {entry(0, 1, 40), entry(0, 2, 60), spread, entry(1, 1, 100)};
  CHECK(remaining_work(row) == 1000);
  auto table = admission_table(row, 20, c);  // b0 = 20: rates in iterations per second
  REQUIRE(table.size() == 3);
  CHECK(table[0].gpu_type == "t4");
  CHECK(table[0].gpus == 1);
  CHECK(table[0].goodput == Approx(2));
  CHECK(table[1].gpus == 2);
  CHECK(table[1].goodput == Approx(3));  // not 2 x 2: no linear scaling
  CHECK(table[2].gpu_type == "a100");
  CHECK(table[2].goodput == Approx(5));
  CHECK(admission_table(row, 0, c).empty());
  CHECK(gpus_per_type(c) == std::map<std::string, int>{{"a100", 2}, {"t4", 8}});
  row.progress.reset();
  CHECK(remaining_work(row) == 0);
}

TEST_CASE("a linear table: equal costs give the fewest GPUs that meet", "[deadline]") {
  const Cluster c = two_types();
  GoodputRow row;
  row.progress = JobProgress{0, 1000};
  for (int g = 1; g <= 8; ++g) row.entries.push_back(entry(0, g, g));  // 1 iteration/s per GPU
  AdmissionInput in;
  in.remaining_work = remaining_work(row);
  in.table = admission_table(row, 1, c);
  in.free_gpus = gpus_per_type(c);
  in.now = 100;
  in.deadline = 100 + 600;
  in.margin = 0.1;
  // 1100 planned iterations in 600 s: 2 GPUs (550 s) is the fewest; 4 and 8 cost the same.
  AdmissionPlan p = plan_admission(in);
  REQUIRE(p.admitted);
  CHECK(p.config->gpus == 2);
  CHECK(p.finish == Approx(600));
  // A 100 s restart: 2 GPUs need 650 s planned; 3 (467 s planned, 1300 GPU-s) are now
  // cheaper than 4 (1400 GPU-s).
  in.restart_overhead = 100;
  p = plan_admission(in);
  REQUIRE(p.admitted);
  CHECK(p.config->gpus == 3);
  CHECK(p.finish == Approx(100 + 100 + 1000.0 / 3));
  // Too late: refused, with the best finish on all 8 GPUs (no margin).
  in.deadline = 300;
  p = plan_admission(in);
  CHECK_FALSE(p.admitted);
  CHECK(p.best_finish == Approx(100 + 100 + 125));
}
