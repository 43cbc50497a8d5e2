#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "slurm/canned_runner.hpp"
#include "slurm/slurm_cluster.hpp"
#include "slurm/slurm_node_view.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::slurm;
using sia::slurm::test::CannedRunner;
using sia::test::error_of;

namespace {

const char* kNodes =
    "NodeName=n1 NodeAddr=10.0.0.1 Gres=gpu:a100:4 GresUsed=gpu:a100:3(IDX:0-2) State=MIXED "
    "Partitions=sia\n"
    "NodeName=n2 Gres=gpu:t4:2 GresUsed=gpu:t4:0 State=IDLE Partitions=sia\n"
    "NodeName=n3 Gres=gpu:l40s:2 State=IDLE Partitions=sia\n"
    "NodeName=n4 Gres=gpu:a100:4 State=IDLE+DRAIN Partitions=sia\n"
    "NodeName=n5 Gres=gpu:a100:4 State=IDLE Partitions=other\n"
    "NodeName=c1 Gres=(null) State=IDLE Partitions=sia\n";

SlurmSettings settings() {
  SlurmSettings s;
  s.partition = "sia";
  s.gres_types = {{"l40s", "rtx2080ti"}};
  return s;
}

const std::set<std::string> kCatalog{"a100", "t4", "rtx2080ti"};

// n1: 3 GPUs in use -- 2 by sia's job 7, 1 by job 8 of another user with sia's mark forged.
const char* kJobsOnN1 =
    "JobId=7 UserId=sia(990) JobState=RUNNING NodeList=n1 Nodes=n1 GRES=gpu:a100:2(IDX:0-1) "
    "Comment=sia:j:2\n"
    "JobId=8 UserId=bob(1001) JobState=RUNNING NodeList=n1 Nodes=n1 GRES=gpu:a100:1(IDX:2) "
    "Comment=sia:j:2\n";

}  // namespace

TEST_CASE("the cluster from Slurm: partition, usable nodes, mapped types", "[slurm]") {
  CannedRunner runner;
  runner.out_for["node"] = kNodes;
  Cluster c = cluster_from_slurm(read_nodes(runner), settings(), kCatalog, "sia");
  CHECK(runner.calls.front() == std::vector<std::string>{"scontrol", "-d", "-o", "show", "node"});
  CHECK(c.type_names() == "a100, t4, rtx2080ti");  // the order of the nodes
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "n1");
  CHECK(c.nodes[0].address == "10.0.0.1");
  CHECK(c.total_gpus() == 8);
}

TEST_CASE("the cluster from Slurm: bad input is one line", "[slurm]") {
  CannedRunner runner;
  runner.out_for["node"] = kNodes;
  auto nodes = read_nodes(runner);
  SlurmSettings s = settings();
  s.gres_types.clear();
  auto [status, message] = error_of([&] { cluster_from_slurm(nodes, s, kCatalog, "x"); });
  CHECK(status == 78);
  CHECK(message ==
        "slurm: node n3: GPU type \"l40s\" is neither mapped in slurm.gres_types nor a "
        "catalog GPU type");
  runner.out_for["node"] = "NodeName=m Gres=gpu:a100:2,gpu:t4:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).second ==
        "slurm: node m: GPUs of two types (a100, t4): sia needs one GPU type per node");
  runner.out_for["node"] = "NodeName=m Gres=gpu:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).first == 78);
  runner.out_for["node"] = "NodeName=m Gres=gpu:a100:2 State=DOWN\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).first == 69);
  // A NodeAddr that is no host name (here bytes that are not text) is refused by name.
  runner.out_for["node"] = "NodeName=m NodeAddr=10.0.\xf7 Gres=gpu:a100:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }) ==
        std::pair<int, std::string>{78,
                                    "slurm: node m: NodeAddr is not a node address (a host "
                                    "name or address: printable ASCII, no white space, not "
                                    "starting with '-')"});
  runner.status = 1;  // slurmctld away
  runner.err = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n";
  auto [st, msg] = error_of([&] { read_nodes(runner); });
  CHECK(st == 69);
  CHECK(msg ==
        "slurm: slurmctld not reachable (scontrol: slurm_load_node error: Unable to contact "
        "slurm controller (connect failure))");
}

TEST_CASE("usable GPUs: another user's jobs hold theirs, sia's own do not", "[slurm]") {
  CannedRunner runner;
  runner.out_for["node"] = kNodes;
  runner.out_for["job"] = kJobsOnN1;
  const std::vector<OwnedJob> ours = {{{"j", 2}, 990, 7}};
  auto usable = usable_gpus(read_nodes(runner), read_jobs(runner), settings(), ours);
  CHECK(usable == std::map<std::string, long>{{"n1", 3}, {"n2", 2}, {"n3", 2}});
  // Job 8's user, with its mark forged, is sia's user too (a job of theirs runs through
  // sia): still not the job sia recorded, so it holds its GPU.
  const std::vector<OwnedJob> bobs = {{{"j", 2}, 1001, 7}};
  usable = usable_gpus(read_nodes(runner), read_jobs(runner), settings(), bobs);
  CHECK(usable.at("n1") == 1);
  runner.out_for["job"] = "JobId=9 UserId=sia(990) JobState=RUNNING NodeList=zz Comment=sia:k:0\n";
  const std::vector<OwnedJob> k = {{{"k", 0}, 990, 9}};
  auto [status, message] =
      error_of([&] { usable_gpus(read_nodes(runner), read_jobs(runner), settings(), k); });
  CHECK(status == 65);
  CHECK(message == "slurm: job 9 (sia:k:0): its node list names unknown node zz");
}

TEST_CASE("usable GPUs: a record not yet adopted counts only the job adoption would take",
          "[slurm]") {
  CannedRunner runner;
  runner.out_for["node"] = kNodes;
  // n1: 3 of 4 GPUs in use, all by jobs of user 1001 carrying the mark sia:j:2.
  runner.out_for["job"] =
      "JobId=7 UserId=alice(1001) JobState=RUNNING NodeList=n1 Nodes=n1 "
      "GRES=gpu:a100:2(IDX:0-1) Comment=sia:j:2\n"
      "JobId=8 UserId=alice(1001) JobState=RUNNING NodeList=n1 Nodes=n1 GRES=gpu:a100:1(IDX:2) "
      "Comment=sia:j:2\n";
  auto jobs = read_jobs(runner);
  // sia wrote the intent of generation 2 at 1000 and was killed before sbatch answered.
  const std::vector<OwnedJob> intent = {{{"j", 2}, 1001, 0, 1000}};
  SECTION("the user's own job with the mark guessed before the intent is not sia's") {
    jobs[0].submit_time = 900;   // alice's, the next mark guessed
    jobs[1].submit_time = 1001;  // sia's sbatch
    CHECK(usable_gpus(read_nodes(runner), jobs, settings(), intent).at("n1") == 2);
    CHECK(!is_sia_job(jobs[0], adopted(intent, jobs)));
    CHECK(is_sia_job(jobs[1], adopted(intent, jobs)));
    const auto views = node_views(read_nodes(runner), jobs, settings(), intent);
    auto n1 =
        std::find_if(views.begin(), views.end(), [](const auto& v) { return v.name == "n1"; });
    REQUIRE(n1 != views.end());
    CHECK(n1->gpus_sia == 1);
    CHECK(n1->gpus_other == 2);
  }
  SECTION("submitted after the sbatch's time limit: not sia's either") {
    jobs[0].submit_time = 1000;
    jobs[1].submit_time = 1000 + kCommandTimeout + kSubmitSlack + 1;
    CHECK(usable_gpus(read_nodes(runner), jobs, settings(), intent).at("n1") == 3);
  }
  SECTION("two within the window: only the one adoption takes (the lowest id)") {
    jobs[0].submit_time = 1000;
    jobs[1].submit_time = 1002;
    CHECK(usable_gpus(read_nodes(runner), jobs, settings(), intent).at("n1") == 3);
    REQUIRE(owned_job(intent[0], jobs));
    CHECK(owned_job(intent[0], jobs)->id == "7");
  }
  SECTION("none within the window: no job is sia's by the intent") {
    jobs[0].submit_time = 100;
    jobs[1].submit_time = 200;
    CHECK(usable_gpus(read_nodes(runner), jobs, settings(), intent).at("n1") == 1);
    CHECK(adopted(intent, jobs).empty());
  }
}

TEST_CASE("a Slurm job is sia's only with the recorded mark, uid and id", "[slurm]") {
  auto job = [](const std::string& line) { return parse_jobs(line).at(0); };
  const SlurmJob mine =
      job("JobId=41 JobName=sia.j.1 UserId=alice(1001) JobState=RUNNING "
          "NodeList=n1 Comment=sia:j:1");
  const OwnedJob rec{{"j", 1}, 1001, 41};
  CHECK(owns(rec, mine));
  // The same user's own job with the mark written on it: another id.
  CHECK(!owns(rec, job("JobId=50 JobName=sia.j.1 UserId=alice(1001) JobState=RUNNING "
                       "NodeList=n1 Comment=sia:j:1")));
  // Another user's job with sia's mark and even the recorded id: another uid.
  CHECK(!owns(rec, job("JobId=41 JobName=sia.j.1 UserId=bob(1002) JobState=RUNNING "
                       "NodeList=n1 Comment=sia:j:1")));
  // The right id and user, another generation's mark (or none).
  CHECK(!owns(rec, job("JobId=41 JobName=x UserId=alice(1001) JobState=RUNNING NodeList=n1 "
                       "Comment=sia:j:2")));
  CHECK(!owns(rec, job("JobId=41 JobName=x UserId=alice(1001) JobState=RUNNING NodeList=n1")));
  // A heterogeneous job's second component: its HetJobId is the recorded id.
  CHECK(owns(rec, job("JobId=42 HetJobId=41 HetJobOffset=1 JobName=sia.j.1 UserId=alice(1001) "
                      "JobState=RUNNING NodeList=n2 Comment=sia:j:1")));
  // A HetJobId a user wrote in its job's name is text, not Slurm's field.
  CHECK(!owns(rec, job("JobId=50 JobName=x HetJobId=41 UserId=alice(1001) JobState=RUNNING "
                       "NodeList=n1 Comment=sia:j:1")));
  // No id recorded yet (sbatch unanswered): adopted by mark and uid only.
  CHECK(owns({{"j", 1}, 1001, 0}, mine));
  CHECK(!owns({{"j", 1}, 1002, 0}, mine));
  // A record that drew a token adopts only a job whose mark carries it; once the id is
  // recorded, the id and uid decide (a mark with or without the token).
  const SlurmJob tokened =
      job("JobId=41 JobName=sia.j.1 UserId=alice(1001) JobState=RUNNING NodeList=n1 "
          "Comment=sia:j:1:s3cret");
  CHECK(owns({{"j", 1, "s3cret"}, 1001, 0}, tokened));
  CHECK(!owns({{"j", 1, "s3cret"}, 1001, 0}, mine));
  CHECK(!owns({{"j", 1, "other"}, 1001, 0}, tokened));
  CHECK(owns({{"j", 1}, 1001, 0}, tokened));  // a record of before the token: as it did
  CHECK(owns({{"j", 1, "s3cret"}, 1001, 41}, tokened));
  CHECK(owns(rec, tokened));
  CHECK(is_sia_job(mine, {{{"k", 1}, 1001, 40}, rec}));
  CHECK(!is_sia_job(mine, {}));
}

TEST_CASE("sia-ctl nodes under Slurm: each node's GPUs, who holds them, offered or why not",
          "[slurm]") {
  CannedRunner runner;
  runner.out_for["node"] = kNodes;
  runner.out_for["job"] =
      std::string(kJobsOnN1) +
      "JobId=9 UserId=sia(990) JobState=COMPLETED NodeList=n2 Nodes=n2 GRES=gpu:t4:2(IDX:0-1) "
      "Comment=sia:k:1\n";
  const std::vector<OwnedJob> ours = {{{"j", 2}, 990, 7}, {{"k", 1}, 990, 9}};
  auto views = node_views(read_nodes(runner), read_jobs(runner), settings(), ours);
  REQUIRE(views.size() == 6);
  auto at = [&](const std::string& name) {
    return *std::find_if(views.begin(), views.end(),
                         [&](const SlurmNodeView& v) { return v.name == name; });
  };
  CHECK(views.front().name == "c1");  // sorted by name
  const auto n1 = at("n1");
  CHECK(n1.state == "MIXED");
  CHECK(n1.gpu_type == "a100");
  CHECK((n1.gpus == 4 && n1.gpus_sia == 2 && n1.gpus_other == 1));
  CHECK_FALSE(n1.offered);
  CHECK(n1.why == "other jobs hold 1 of its GPUs");
  const auto n2 = at("n2");  // job 9 completed: holds nothing
  CHECK((n2.offered && n2.why.empty() && n2.gpus_sia == 0 && n2.gpus_other == 0));
  CHECK(at("n3").gpu_type == "rtx2080ti");  // l40s, mapped
  CHECK(at("n3").offered);
  CHECK(at("n4").why == "Slurm state IDLE+DRAIN");
  CHECK(at("n5").why == "not in partition sia");
  CHECK(at("c1").why == "no GPUs");
  const auto j = node_views_json(views);
  CHECK(j["nodes"][0] == nlohmann::json{{"name", "c1"},
                                        {"state", "IDLE"},
                                        {"gpu_type", ""},
                                        {"gpus", 0},
                                        {"gpus_sia", 0},
                                        {"gpus_other", 0},
                                        {"offered", false},
                                        {"why", "no GPUs"}});
}
