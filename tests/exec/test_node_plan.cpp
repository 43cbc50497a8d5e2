#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "exec/node_plan.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::exec;
using sia::test::error_of;

namespace {

const char* kCluster = R"({"apiVersion": "sia/v1", "kind": "Cluster", "data": {
  "name": "two", "node_groups": [
    {"gpu_type": "t4", "gpus_per_node": 4, "count": 2, "addresses": ["10.0.0.1", "10.0.0.2"]},
    {"gpu_type": "a100", "gpus_per_node": 8, "count": 1}]}})";

const char* kPlacement = R"({"apiVersion": "sia/v1", "kind": "Placement", "data": {
  "cluster_name": "two", "jobs": [
    {"name": "big", "gpu_type": "t4", "batch_size": 256.0, "local_bsz": 32, "accum_steps": 1,
     "nodes": [{"name": "t4-1", "gpus": [0, 1, 2, 3]}, {"name": "t4-0", "gpus": [2, 3]}]},
    {"name": "small", "gpu_type": "t4", "batch_size": 38, "local_bsz": 19,
     "nodes": [{"name": "t4-0", "gpus": [1]}]},
    {"name": "other", "gpu_type": "a100",
     "nodes": [{"name": "a100-0", "gpus": [0]}]}]}})";

const char* kJobs = R"({"apiVersion": "sia/v1", "kind": "Jobs", "data": {"jobs": [
  {"name": "big", "model": "cifar10", "command": ["python", "train.py", "--big"]},
  {"name": "small", "model": "cifar10", "command": ["./w"]},
  {"name": "other", "model": "cifar10"}]}})";

struct Inputs {
  Cluster cluster = cluster_from_document(test::doc_from(kCluster, "Cluster"));
  Placement placement = parse_placement(test::doc_from(kPlacement, "Placement").data(), cluster);
  std::vector<JobState> jobs = jobs_from_documents({test::doc_from(kJobs, "Jobs", "jobs.json")});
};

}  // namespace

TEST_CASE("ranks follow the placement's node order, then GPU index", "[plan]") {
  Inputs in;
  auto v = plan_node(in.placement, in.cluster, in.jobs, "t4-0", "p.json");
  REQUIRE(v.size() == 2);
  const JobLaunch& big = v[0];
  CHECK(big.job == "big");
  CHECK(big.world_size() == 6);
  REQUIRE(big.ranks.size() == 2);
  CHECK(big.ranks[0].rank == 4);
  CHECK(big.ranks[0].local_rank == 0);
  CHECK(big.ranks[0].gpus == std::vector<int>{2});
  CHECK(big.ranks[1].rank == 5);
  CHECK(big.master_addr == "10.0.0.2");  // t4-1 comes first
  CHECK(big.local_gpus() == std::vector<int>{2, 3});
  CHECK(v[1].job == "small");
  CHECK(v[1].master_addr == "127.0.0.1");  // on this node only

  auto other = plan_node(in.placement, in.cluster, in.jobs, "t4-1", "p.json");
  REQUIRE(other.size() == 1);
  CHECK(other[0].ranks.back().rank == 3);
  CHECK(plan_node(in.placement, in.cluster, in.jobs, "nowhere", "p.json").empty());
}

TEST_CASE("a generation gets the worker environment", "[plan]") {
  Inputs in;
  auto v = plan_node(in.placement, in.cluster, in.jobs, "t4-0", "p.json");
  StateDir state("/state");
  GenerationSettings s;
  s.report_interval = 2.5;
  s.cwd = "/work";
  s.file_exists = [](const std::string& p) { return p == "/state/jobs/big/ckpt/latest"; };
  JobLaunch big = v[0];
  s.port_free = [](int) { return false; };  // never probed: every node must agree
  prepare_generation(big, 3, state, s);
  const auto& env = big.ranks[1].env;
  CHECK(env.at("RANK") == "5");
  CHECK(env.at("LOCAL_RANK") == "1");
  CHECK(env.at("WORLD_SIZE") == "6");
  CHECK(env.at("LOCAL_WORLD_SIZE") == "2");
  CHECK(env.at("MASTER_ADDR") == "10.0.0.2");
  CHECK(env.at("MASTER_PORT") == std::to_string(derive_port("big", 3, 29500, 29999)));
  CHECK(env.at("SIA_JOB") == "big");
  CHECK(env.at("SIA_ROUND") == "3");
  CHECK(env.at("SIA_GPU_TYPE") == "t4");
  CHECK(env.at("SIA_BATCH_SIZE") == "256");
  CHECK(env.at("SIA_LOCAL_BSZ") == "32");
  CHECK(env.at("SIA_ACCUM_STEPS") == "1");
  CHECK(env.at("SIA_CKPT_DIR") == "/state/jobs/big/ckpt");
  CHECK(env.at("SIA_RESTORE") == "1");
  CHECK(env.at("SIA_REPORT") == "/state/jobs/big/reports.jsonl");
  CHECK(env.at("SIA_BATCH_PLAN") == "/state/jobs/big/batch-plan.json");
  CHECK(big.plan == 0);
  CHECK_FALSE(big.restore_missing);
  CHECK(env.at("SIA_REPORT_INTERVAL") == "2.5");
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "3");
  CHECK(big.ranks[1].log == "/state/jobs/big/logs/rank-5.log");
  CHECK(big.cwd == "/work");

  JobLaunch small = v[1];
  s.ckpt_root = "/shared/ckpt";
  int derived = derive_port(state.root() + ":small", 1, 29500, 29999);
  s.port_free = [&](int p) { return p != derived; };  // taken: the next one is used
  prepare_generation(small, 1, state, s);
  // The placement's numbers, as given: the worker keeps the invariant (it trains 19).
  CHECK(small.ranks[0].env.at("SIA_BATCH_SIZE") == "38");
  CHECK(small.ranks[0].env.at("SIA_RESTORE") == "0");
  CHECK(small.ranks[0].env.at("SIA_CKPT_DIR") == "/shared/ckpt/small");
  CHECK(small.master_port == (derived == 29999 ? 29500 : derived + 1));

  // Without batch settings in the placement, the worker chooses.
  JobLaunch bare;
  bare.job = "bare";
  bare.node = "n";
  bare.nodes = {NodeGpus{"n", {0}}};
  bare.ranks = {RankLaunch{0, 0, {0}, "", {}}};
  prepare_generation(bare, 1, state, s);
  CHECK(bare.ranks[0].env.count("SIA_BATCH_SIZE") == 0);
  CHECK(bare.ranks[0].env.count("SIA_LOCAL_BSZ") == 0);
  CHECK(bare.ranks[0].env.at("SIA_ACCUM_STEPS") == "0");
}

TEST_CASE("checkpoints follow the job; a missing one is noticed", "[plan]") {
  Inputs in;
  in.jobs[0].checkpoint_dir = "/nfs/sia/ckpt/big";  // the controller's choice
  in.jobs[0].step = 1200;                           // it trained before
  auto v = plan_node(in.placement, in.cluster, in.jobs, "t4-0", "p.json");
  StateDir state("/state");
  GenerationSettings s;
  bool present = false;
  s.file_exists = [&](const std::string& p) { return present && p == "/nfs/sia/ckpt/big/latest"; };
  JobLaunch l = v[0];
  prepare_generation(l, 2, state, s);
  CHECK(l.ckpt_dir == "/nfs/sia/ckpt/big");
  CHECK(l.expected_step == 1200);
  CHECK_FALSE(l.restore);
  CHECK(l.restore_missing);  // expected a checkpoint, found none
  present = true;
  l = v[0];
  prepare_generation(l, 2, state, s);
  CHECK(l.restore);
  CHECK_FALSE(l.restore_missing);
  // A node that mounts the storage elsewhere says so with its own --ckpt-root.
  s.ckpt_root = "/mnt/ckpt";
  l = v[0];
  prepare_generation(l, 2, state, s);
  CHECK(l.ckpt_dir == "/mnt/ckpt/big");
  // A job the controller never saw train expects nothing.
  l = v[1];
  prepare_generation(l, 1, state, s);
  CHECK_FALSE(l.restore_missing);
}

TEST_CASE("ports are derived from job and round, within the range", "[plan]") {
  for (int g = 1; g < 50; ++g) {
    int p = derive_port("job", g, 30000, 30009);
    CHECK(p >= 30000);
    CHECK(p <= 30009);
  }
  CHECK(derive_port("a", 1, 29500, 29999) == derive_port("a", 1, 29500, 29999));
  CHECK(derive_port("a", 1, 29500, 29999) != derive_port("a", 2, 29500, 29999));
}

TEST_CASE("bad inputs name the job and the file", "[plan]") {
  Inputs in;
  auto e = error_of([&] { plan_node(in.placement, in.cluster, in.jobs, "a100-0", "p.json"); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "jobs.json: jobs[2].command: job \"other\" has no command to run (give its "
        "JobSpec a command)");
  e = error_of([&] { plan_node(in.placement, in.cluster, {}, "t4-0", "p.json"); });
  CHECK(e.first == 65);
  CHECK(e.second == "p.json: job \"big\" is placed on node \"t4-0\" but no --jobs file was given");
  in.jobs.erase(in.jobs.begin());
  e = error_of([&] { plan_node(in.placement, in.cluster, in.jobs, "t4-0", "p.json"); });
  CHECK(e.second ==
        "p.json: job \"big\" is placed on node \"t4-0\" but no --jobs file describes it");
}

TEST_CASE("without a cluster file the placement names the nodes", "[plan]") {
  Document d = test::doc_from(kPlacement, "Placement");
  Cluster c = cluster_from_placement(d.data());
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "t4-1");
  CHECK(c.nodes[0].gpus == 4);
  CHECK(c.nodes[0].address == "t4-1");
  Placement p = parse_placement(d.data(), c);
  CHECK(p.jobs.size() == 3);
  // A node given GPUs of two types is still refused.
  Document bad = test::doc_from(R"({"apiVersion": "sia/v1", "kind": "Placement", "data": {
    "jobs": [{"name": "a", "gpu_type": "t4", "nodes": [{"name": "n", "gpus": [0]}]},
             {"name": "b", "gpu_type": "v100", "nodes": [{"name": "n", "gpus": [1]}]}]}})",
                                "Placement", "p.json");
  auto e = error_of([&] { parse_placement(bad.data(), cluster_from_placement(bad.data())); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "p.json: jobs[1].nodes[0].name: node \"n\" has GPUs of type \"t4\", not \"v100\"");
  // A batch is a whole number of samples.
  Document half = test::doc_from(R"({"apiVersion": "sia/v1", "kind": "Placement", "data": {
    "jobs": [{"name": "a", "gpu_type": "t4", "nodes": [{"name": "n", "gpus": [0]}],
              "batch_size": 37.5, "local_bsz": 19}]}})",
                                 "Placement", "p.json");
  e = error_of([&] { parse_placement(half.data(), cluster_from_placement(half.data())); });
  CHECK(e.first == 65);
  CHECK(e.second ==
        "p.json: jobs[0].batch_size: expected a whole number of samples from 0 to 1099511627776, "
        "got the number 37.5");
  // A job listing a node twice, or no node at all, is refused.
  Document twice = test::doc_from(R"({"apiVersion": "sia/v1", "kind": "Placement", "data": {
    "jobs": [{"name": "a", "gpu_type": "t4",
              "nodes": [{"name": "n", "gpus": [0]}, {"name": "n", "gpus": [1]}]}]}})",
                                  "Placement", "p.json");
  e = error_of([&] { parse_placement(twice.data(), cluster_from_placement(twice.data())); });
  CHECK(e.first == 65);
  CHECK(e.second == "p.json: jobs[0].nodes[1].name: node \"n\" is listed twice for job \"a\"");
  Document none = test::doc_from(R"({"apiVersion": "sia/v1", "kind": "Placement", "data": {
    "jobs": [{"name": "a", "gpu_type": "t4", "nodes": []}]}})",
                                 "Placement", "p.json");
  e = error_of([&] { parse_placement(none.data(), cluster_from_placement(none.data())); });
  CHECK(e.first == 65);
  CHECK(e.second.rfind("p.json: jobs[0].nodes: expected at least one node", 0) == 0);
}

TEST_CASE("the ranks run in the job's workdir, else in sia-run's directory", "[plan]") {
  Inputs in;
  in.jobs[1].spec.workdir = "/home/alice/small";  // recorded at submission
  auto v = plan_node(in.placement, in.cluster, in.jobs, "t4-0", "p.json");
  REQUIRE(v.size() == 2);
  StateDir state("/state");
  GenerationSettings s;
  s.cwd = "/var/lib/sia-run";
  for (auto& l : v) prepare_generation(l, 1, state, s);
  CHECK(v[0].cwd == "/var/lib/sia-run");  // big: none recorded
  CHECK(v[1].cwd == "/home/alice/small");
  // Through launch.json to the supervisor.
  CHECK(parse_job_launch(test::doc_from(dump_document("RunLaunch", nlohmann::json::object(),
                                                      job_launch_to_json(v[1]), false),
                                        "RunLaunch")
                             .data())
            .cwd == "/home/alice/small");
}
