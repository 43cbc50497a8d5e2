#include <catch2/catch.hpp>

#include "deadline/admission.hpp"

using namespace sia::deadline;

namespace {

// A job with 36000 units of work left; goodput per configuration worked by hand below.
AdmissionInput job(double deadline) {
  AdmissionInput in;
  in.remaining_work = 36000;
  in.table = {{"t4", 1, 1}, {"t4", 4, 3.6}, {"a100", 1, 5}, {"a100", 2, 9}};
  in.free_gpus = {{"t4", 8}, {"a100", 2}};
  in.now = 1000;
  in.deadline = deadline;
  in.margin = 0.1;
  return in;
}

}  // namespace

TEST_CASE("the cheapest configuration that meets the deadline with margin", "[deadline]") {
  // Times to finish: t4x1 36000 s (10 GPU-h), t4x4 10000 s (11.1 GPU-h), a100x1 7200 s
  // (2 GPU-h), a100x2 4000 s (2.22 GPU-h). A 9000 s window with 10% margin fits
  // 7200 * 1.1 = 7920: a100x1 is the cheapest that fits.
  AdmissionPlan p = plan_admission(job(1000 + 9000));
  REQUIRE(p.admitted);
  CHECK(p.config->gpu_type == "a100");
  CHECK(p.config->gpus == 1);
  CHECK(p.finish == Approx(1000 + 7200));
  CHECK(p.gpu_hours == Approx(2));
  // 7000 s: a100x1 is too slow (7920 > 7000); a100x2 needs 4400 s with margin.
  p = plan_admission(job(1000 + 7000));
  REQUIRE(p.admitted);
  CHECK(p.config->gpus == 2);
  CHECK(p.gpu_hours == Approx(2 * 4000.0 / 3600));
  // 4000 s: nothing meets 4000 with margin (a100x2: 4400); at best it finishes at +4000.
  p = plan_admission(job(1000 + 4000));
  CHECK_FALSE(p.admitted);
  CHECK(p.best_finish == Approx(1000 + 4000));
}

TEST_CASE("admission sees only the free GPUs", "[deadline]") {
  AdmissionInput in = job(1000 + 12000);
  in.free_gpus = {{"t4", 8}};  // the A100s are held by guaranteed jobs
  AdmissionPlan p = plan_admission(in);
  REQUIRE(p.admitted);  // t4x4: 10000 s, 11000 with margin
  CHECK(p.config->gpu_type == "t4");
  CHECK(p.config->gpus == 4);
  in.free_gpus = {{"t4", 3}};
  p = plan_admission(in);
  CHECK_FALSE(p.admitted);
  CHECK(p.best_finish == Approx(1000 + 36000));
  in.free_gpus = {};
  p = plan_admission(in);
  CHECK_FALSE(p.admitted);
  CHECK(p.best_finish == kNever);
}

TEST_CASE("restart overhead and required goodput", "[deadline]") {
  CHECK(time_to_finish(100, 10, 30) == 40);
  CHECK(time_to_finish(100, 0, 30) == kNever);
  CHECK(time_to_finish(0, 0, 30) == 0);
  CHECK(required_goodput(3600, 0, 3700, 100) == 1);
  CHECK(required_goodput(3600, 0, 100, 100) == kNever);
  CHECK(required_goodput(0, 0, 100, 100) == 0);
}

TEST_CASE("guaranteed jobs are admitted in order on what the others leave", "[deadline]") {
  std::vector<GuaranteedJob> jobs = {
      {"a", job(1000 + 9000)}, {"b", job(1000 + 9000)}, {"c", job(1000 + 9000)}};
  auto out = admit_in_order(jobs, {{"t4", 8}, {"a100", 2}});
  REQUIRE(out.size() == 3);
  CHECK(out[0].plan.config->gpu_type == "a100");  // a100x1 each for a and b
  CHECK(out[1].plan.config->gpu_type == "a100");
  CHECK_FALSE(out[2].plan.admitted);  // t4x4 needs 11000 s with margin
  CHECK(out[2].plan.best_finish == Approx(1000 + 10000));
}

TEST_CASE("a job admitted before holds its fastest configuration when at risk", "[deadline]") {
  // a's deadline is now out of reach (t4x4 alone would need 11000 s with margin, the A100s
  // 7920): held, it keeps the fastest configuration, a100x2 (4000 s), and b gets only T4s.
  std::vector<GuaranteedJob> jobs = {{"a", job(1000 + 3000), true}, {"b", job(1000 + 12000)}};
  auto out = admit_in_order(jobs, {{"t4", 8}, {"a100", 2}});
  CHECK_FALSE(out[0].plan.admitted);
  REQUIRE(out[0].plan.fastest);
  CHECK(out[0].plan.fastest->gpu_type == "a100");
  CHECK(out[0].plan.best_finish == Approx(1000 + 4000));
  REQUIRE(out[1].plan.admitted);
  CHECK(out[1].plan.config->gpu_type == "t4");
  // Not held (a new submission refused): it takes nothing, b gets an A100.
  jobs[0].held = false;
  out = admit_in_order(jobs, {{"t4", 8}, {"a100", 2}});
  CHECK(out[1].plan.config->gpu_type == "a100");
}
