#include <catch2/catch.hpp>

#include <filesystem>

#include "model/catalog.hpp"
#include "sim/workload.hpp"
#include "sim/workload_transform.hpp"

#include "test_util.hpp"

using namespace sia;

namespace {

std::vector<JobSpec> jobs_of(const Catalog& c, int n) {
  std::string csv = "name,time,application,num_replicas,batch_size\n";
  for (int i = 0; i < n; ++i) {
    csv += "cifar10-" + std::to_string(i) + "," + std::to_string(10 * i) + ",cifar10,4,2048\n";
  }
  return parse_workload_csv(csv, "w.csv", c);
}

int count(const std::vector<JobSpec>& jobs, Adaptivity a) {
  int n = 0;
  for (const auto& j : jobs) n += j.adaptivity == a;
  return n;
}

}  // namespace

TEST_CASE("a seeded draw makes shares of the jobs rigid and strong-scaling", "[workload]") {
  Catalog c(test::catalog_dir());
  auto jobs = jobs_of(c, 400);
  auto none = jobs;
  assign_categories(none, 0, 0, 7);
  CHECK(count(none, Adaptivity::adaptive) == 400);

  auto all = jobs;
  assign_categories(all, 1, 0, 7);
  CHECK(count(all, Adaptivity::rigid) == 400);
  auto strong = jobs;
  assign_categories(strong, 0, 1, 7);
  CHECK(count(strong, Adaptivity::strong_scaling) == 400);

  auto mixed = jobs;
  assign_categories(mixed, 0.25, 0.5, 7);
  // 400 uniform draws: each share within a few standard deviations of its expectation.
  CHECK(count(mixed, Adaptivity::rigid) > 60);
  CHECK(count(mixed, Adaptivity::rigid) < 140);
  CHECK(count(mixed, Adaptivity::strong_scaling) > 160);
  CHECK(count(mixed, Adaptivity::strong_scaling) < 240);

  // Same seed, same categories; a job rigid at 25% stays rigid at 50%.
  auto again = jobs;
  assign_categories(again, 0.25, 0.5, 7);
  auto half = jobs;
  assign_categories(half, 0.5, 0, 7);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CHECK(again[i].adaptivity == mixed[i].adaptivity);
    if (mixed[i].adaptivity == Adaptivity::rigid) CHECK(half[i].adaptivity == Adaptivity::rigid);
  }
  // Another seed, another draw.
  CHECK(category_draw("cifar10-1", 7) != category_draw("cifar10-1", 8));
  double u = category_draw("cifar10-1", 7);
  CHECK(u >= 0);
  CHECK(u < 1);
}

TEST_CASE("category shares are checked", "[workload]") {
  Catalog c(test::catalog_dir());
  auto jobs = jobs_of(c, 3);
  auto e = test::error_of([&] { assign_categories(jobs, 1.5, 0, 1); });
  CHECK(e.first == 64);
  CHECK(e.second == "--rigid-share: expected a fraction from 0 to 1, got 1.5");
  e = test::error_of([&] { assign_categories(jobs, 0.6, 0.6, 1); });
  CHECK(e.first == 64);
  // A job without a tuned configuration cannot be made rigid.
  jobs[1].gpus = 0;
  e = test::error_of([&] { assign_categories(jobs, 1, 0, 1); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "job cifar10-1: to make it rigid, expected its tuned GPU count and batch size "
        "(num_replicas, batch_size)");
}

TEST_CASE("scaling repeats every job and multiplies every node group", "[workload]") {
  Catalog c(test::catalog_dir());
  auto jobs = jobs_of(c, 3);
  auto four = scale_workload(jobs, 4);
  REQUIRE(four.size() == 12);
  CHECK(four[0].name == "cifar10-0-c0");
  CHECK(four[3].name == "cifar10-0-c3");
  CHECK(four[4].name == "cifar10-1-c0");
  CHECK(four[5].submit_time == 10);
  CHECK(four[5].gpus == 4);
  CHECK(scale_workload(jobs, 1).size() == 3);
  CHECK(test::error_of([&] { scale_workload(jobs, 0); }).first == 64);

  Cluster base = read_cluster(test::source_dir() + "/data/clusters/sia-hetero-64.toml");
  Cluster big = scale_cluster(base, 32);
  CHECK(big.total_gpus() == 2048);
  CHECK(big.name == "sia-hetero-64-x32");
  REQUIRE(big.types.size() == base.types.size());
  CHECK(big.types[0].node_count == 6 * 32);
  CHECK(big.nodes.size() == base.nodes.size() * 32);
}
