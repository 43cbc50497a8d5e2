#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "policy/policy.hpp"
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
  // Running on a100 x 1 (30 samples/s, 20 needed): it stays there; a move is offered only
  // for twice its goodput (a100 x 2, 55, is not; t4 x 4, 36, neither).
  row = row_due_in(500);
  row.current = Config{1, 1, 1};
  keep_on_schedule(row, 10);
  REQUIRE(row.entries.size() == 1);
  CHECK(row.entries[0].config == Config{1, 1, 1});
  CHECK(row.entries[0].goodput == Approx(0.30 * kGuaranteedBoost));
  // Running on t4 x 2 at 19 with 1000 s left (10 needed): a100 x 2 (55) at least doubles
  // it, t4 x 4 (36) does not.
  row = row_due_in(1000);
  row.current = Config{0, 1, 2};
  keep_on_schedule(row, 10);
  REQUIRE(row.entries.size() == 2);
  CHECK(row.entries[0].config == Config{0, 1, 2});
  CHECK(row.entries[1].config == Config{1, 1, 2});
  // Running on t4 x 2 (19 samples/s): behind, so the three that reach it.
  row = row_due_in(500);
  row.current = Config{0, 1, 2};
  keep_on_schedule(row, 10);
  CHECK(row.entries.size() == 3);
  // t4 x 2 at 21 reaches the 20 needed, but not the 22 asked with a 10% margin.
  row = row_due_in(500);
  row.entries[1].raw_goodput = 21;
  GoodputRow without = row;
  keep_on_schedule(without, 10);
  CHECK(without.entries.size() == 4);
  keep_on_schedule(row, 10, 0.1);
  CHECK(row.entries.size() == 3);
  // No deadline: as it was.
  row = row_due_in(100);
  row.deadline_in.reset();
  keep_on_schedule(row, 10);
  CHECK(row.entries.size() == 5);
}

namespace {

// One type "A", one node of 4 GPUs.
Cluster four_gpus() {
  const std::string toml = "[[node_groups]]\ngpu_type = \"A\"\ngpus_per_node = 4\ncount = 1\n";
  return cluster_from_document(parse_documents(toml, "test.toml", {"Cluster"}).front());
}

// A job at 1, 2 and 4 GPUs, 100 samples/s per GPU (linear), 1000 iterations of B0 = 100.
GoodputRow linear_job(const std::string& name) {
  GoodputRow r;
  r.job = name;
  r.restart_penalty = 0;
  r.progress = JobProgress{0, 1000};
  for (int g : {1, 2, 4}) r.entries.push_back(entry(0, g, 100.0 * g));
  for (auto& e : r.entries) e.goodput = e.raw_goodput / 100;
  return r;
}

int gpus_of(const Allocation& a, const std::string& job) {
  const JobAllocation* j = a.find(job);
  return j && j->config ? j->config->gpus : 0;
}

}  // namespace

TEST_CASE("Sia keeps a guaranteed job on schedule on a contended cluster", "[deadline]") {
  // g needs 100000 samples in 300 s: 333 samples/s, all four GPUs; three best-effort jobs
  // want them too.
  GoodputMatrix m;
  m.cluster = four_gpus();
  for (const char* name : {"b1", "b2", "b3", "g"}) {
    m.jobs.push_back(linear_job(name));
    m.order.push_back(name);
  }
  const auto policy = make_policy("sia", PolicyOptions{});
  CHECK(gpus_of(policy->allocate(m, std::nullopt), "g") < 4);  // shared without the tier
  GoodputRow& g = m.jobs.back();
  mark_deadline(g, JobClass::guaranteed, 1300, 1000);
  keep_on_schedule(g, 100);
  const Allocation a = policy->allocate(m, std::nullopt);
  CHECK(gpus_of(a, "g") == 4);
  CHECK(gpus_of(a, "b1") + gpus_of(a, "b2") + gpus_of(a, "b3") == 0);
}

TEST_CASE("a guaranteed job outweighs any number of best-effort jobs", "[deadline]") {
  // One node of 8 GPUs; g needs all 8 (800000 samples in 1000 s, 100 per GPU); four
  // best-effort jobs would share them two each. Ten times g's goodput is worth less to
  // Sia's objective (goodput to the power -0.5) than the four together: only the
  // guaranteed job's lift in the ILP runs it.
  GoodputMatrix m;
  m.cluster = cluster_from_document(
      parse_documents("[[node_groups]]\ngpu_type = \"A\"\ngpus_per_node = 8\ncount = 1\n",
                      "test.toml", {"Cluster"})
          .front());
  for (const char* name : {"b1", "b2", "b3", "b4", "g"}) {
    GoodputRow r = linear_job(name);
    r.entries.push_back(entry(0, 8, 800));
    r.entries.back().goodput = 8;
    m.jobs.push_back(r);
    m.order.push_back(name);
  }
  GoodputRow& g = m.jobs.back();
  g.progress = JobProgress{0, 8000};
  mark_deadline(g, JobClass::guaranteed, 2000, 1000);
  keep_on_schedule(g, 100);
  REQUIRE(g.entries.size() == 1);  // only all 8 GPUs reach 800 samples/s
  const auto policy = make_policy("sia", PolicyOptions{});
  const Allocation a = policy->allocate(m, std::nullopt);
  CHECK(gpus_of(a, "g") == 8);
  // Without the lift (marked best-effort, same boosted row) the four best-effort jobs win.
  g.job_class = JobClass::best_effort;
  CHECK(gpus_of(policy->allocate(m, std::nullopt), "g") == 0);
}
