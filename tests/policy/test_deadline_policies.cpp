// The deadline helpers (policy/deadline_rows.hpp) and the elasticflow policy on
// hand-worked matrices.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "policy/deadline_rows.hpp"
#include "policy/policy.hpp"

using namespace sia;

namespace {

// One type "A" of `nodes` nodes with 4 GPUs each.
Cluster four_gpu_nodes(int nodes) {
  const std::string toml =
      "[[node_groups]]\ngpu_type = \"A\"\ngpus_per_node = 4\ncount = " + std::to_string(nodes) +
      "\n";
  return cluster_from_document(parse_documents(toml, "test.toml", {"Cluster"}).front());
}

// An adaptive job on type 0 at 1, 2, 4 and 8 GPUs, raw goodput `per_gpu` x g^`scaling`
// samples/s, normalised so that its 1-GPU entry is worth 1; B0 100.
GoodputRow job(const std::string& name, double per_gpu, double scaling) {
  GoodputRow r;
  r.job = name;
  r.model.init_batch_size = 100;
  r.restart_penalty = 0;
  for (int g : {1, 2, 4, 8}) {
    GoodputEntry e;
    e.config = Config{0, (g + 3) / 4, g};
    e.raw_goodput = per_gpu * std::pow(g, scaling);
    e.goodput = e.raw_goodput / per_gpu;
    e.throughput = e.raw_goodput;
    r.entries.push_back(e);
  }
  return r;
}

GoodputMatrix matrix_of(const Cluster& c, std::vector<GoodputRow> rows) {
  GoodputMatrix m;
  m.cluster = c;
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.job < b.job; });
  for (const auto& r : rows) m.order.push_back(r.job);
  m.jobs = std::move(rows);
  return m;
}

int gpus_of(const Allocation& a, const std::string& job) {
  const JobAllocation* j = a.find(job);
  return j && j->config ? j->config->gpus : 0;
}

}  // namespace

TEST_CASE("required goodput: remaining work over the time left", "[deadline]") {
  GoodputRow r = job("a", 100, 1);
  CHECK_FALSE(required_goodput(r));  // no deadline
  r.deadline_in = 1000;
  CHECK_FALSE(required_goodput(r));  // no progress
  r.progress = JobProgress{200, 1200};
  // 1000 iterations of 100 samples in 1000 s: 100 samples/s.
  CHECK(*required_goodput(r) == Approx(100));
  r.restart_penalty = 500;  // one restore: 500 s left
  CHECK(*required_goodput(r) == Approx(200));
  r.deadline_in = 400;
  CHECK(std::isinf(*required_goodput(r)));
}

TEST_CASE("minimum satisfactory share: the fewest GPUs that reach the need", "[deadline]") {
  const GoodputRow r = job("a", 100, 1);  // 100, 200, 400, 800 samples/s
  CHECK(r.entries[min_satisfactory_entry(r, 150, {16})].config.gpus == 2);
  CHECK(r.entries[min_satisfactory_entry(r, 400, {16})].config.gpus == 4);
  CHECK(min_satisfactory_entry(r, 400, {3}) == -1);  // not enough free GPUs
  CHECK(min_satisfactory_entry(r, 1000, {16}) == -1);
}

TEST_CASE("elasticflow: guaranteed shares first, then greedy marginal gain", "[deadline]") {
  const Cluster c = four_gpu_nodes(2);  // 8 GPUs
  GoodputRow g = job("g", 100, 1);      // needs 300 samples/s: 4 GPUs
  g.job_class = JobClass::guaranteed;
  g.deadline_in = 1000;
  g.progress = JobProgress{0, 3000};
  GoodputRow lin = job("lin", 100, 1);      // scales linearly
  GoodputRow flat = job("flat", 100, 0.2);  // barely scales
  const auto policy = make_policy("elasticflow", PolicyOptions{});
  const Allocation a = policy->allocate(matrix_of(c, {g, lin, flat}), std::nullopt);
  CHECK(gpus_of(a, "g") == 4);
  // The 4 left, by gain per GPU (ties by name): flat's first GPU (1), lin to 2 (1 per GPU;
  // 2 -> 4 no longer fits), flat's second GPU (0.15).
  CHECK(gpus_of(a, "lin") == 2);
  CHECK(gpus_of(a, "flat") == 2);
  // Without its deadline g is one of the crowd: by name, flat's first GPU, then g grows
  // to 4 (1 per GPU), lin to 2, and flat takes the last GPU (0.15).
  g.job_class = JobClass::best_effort;
  g.deadline_in.reset();
  const Allocation b = policy->allocate(matrix_of(c, {g, lin, flat}), std::nullopt);
  CHECK(gpus_of(b, "g") == 4);
  CHECK(gpus_of(b, "lin") == 2);
  CHECK(gpus_of(b, "flat") == 2);
}
