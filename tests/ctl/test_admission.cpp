#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "ctl/admission.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::ctl;

namespace {

// Two nodes of two T4s; cifar10 (the catalog's) takes about 18 minutes on all four at
// best, about 35 on two.
Cluster four_t4() {
  return parse_cluster(Node(nlohmann::json::parse(R"({"name": "p", "node_groups": [
      {"gpu_type": "t4", "gpus_per_node": 2, "count": 2}]})"),
                            "cluster.json", ""));
}

JobSpec guaranteed(const std::string& name, double deadline) {
  JobSpec s;
  s.name = name;
  s.model = "cifar10";
  s.max_gpus = 2;
  s.job_class = JobClass::guaranteed;
  s.deadline = deadline;
  return s;
}

constexpr double kNow = 1.8e9;

}  // namespace

TEST_CASE("the controller admits guaranteed jobs on what the admitted ones leave", "[deadline]") {
  Catalog catalog(test::catalog_dir());
  const Cluster cluster = four_t4();
  Estimator est(cluster, catalog);
  const AdmissionScene scene{cluster, est, kNow, 0.1};
  Submission s{{guaranteed("a", kNow + 3600), guaranteed("b", kNow + 3600)}, {}};
  auto plans = admit_guaranteed(s, {}, scene);
  REQUIRE(plans.size() == 2);
  for (const auto& p : plans) {
    REQUIRE(p.plan.admitted);
    CHECK(p.plan.config->gpus == 2);  // the fewest that meet the hour
    CHECK(p.plan.finish <= kNow + 3600);
  }
  // A third: a and b (waiting in the inbox) hold all four GPUs.
  PendingRequest pending{"submit", "local:x", kNow, {"a", "b"}, {}, s.jobs};
  auto admitted = admitted_jobs(JobBook{}, {pending}, scene);
  REQUIRE(admitted.size() == 2);
  CHECK(admitted[0].held);
  Submission third{{guaranteed("c", kNow + 3600)}, {}};
  auto [status, line] = test::error_of([&] { admit_guaranteed(third, admitted, scene); });
  CHECK(status == 65);
  CHECK(line.rfind("c: deadline: ", 0) == 0);
  CHECK(line.find("the guaranteed jobs admitted before it hold the GPUs it could use; it "
                  "could finish by ") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  // --or-best-effort: submitted best-effort, no plan.
  third.or_best_effort = true;
  CHECK(admit_guaranteed(third, admitted, scene).empty());
  CHECK(third.jobs[0].job_class == JobClass::best_effort);
  // Alone, a deadline of a minute: out of reach on the whole cluster.
  Submission soon{{guaranteed("d", kNow + 60)}, {}};
  auto [status2, line2] = test::error_of([&] { admit_guaranteed(soon, {}, scene); });
  CHECK(status2 == 65);
  CHECK(line2.find("on the GPUs the guaranteed jobs admitted before it leave it could "
                   "finish by ") != std::string::npos);
  // Best-effort jobs ask nothing.
  Submission be{{guaranteed("e", kNow + 60)}, {}};
  be.jobs[0].job_class = JobClass::best_effort;
  CHECK(admit_guaranteed(be, {}, scene).empty());
}
