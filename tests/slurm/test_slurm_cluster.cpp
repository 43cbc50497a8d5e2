#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "slurm/slurm_cluster.hpp"
#include "test_util.hpp"

using namespace sia;
using namespace sia::slurm;
using sia::test::error_of;

namespace {

// Answers scontrol's node and job queries from fixed text; or fails like a dead slurmctld.
class FakeRunner : public CommandRunner {
 public:
  std::string nodes, jobs;
  bool reachable = true;
  std::vector<std::vector<std::string>> calls;
  CommandResult run(const std::vector<std::string>& argv, double) override {
    calls.push_back(argv);
    CommandResult r;
    if (!reachable) {
      r.ran = true;
      r.status = 1;
      r.err = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n";
      return r;
    }
    r.ran = true;
    r.out = argv.back() == "node" ? nodes : jobs;
    return r;
  }
};

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

}  // namespace

TEST_CASE("the cluster from Slurm: partition, usable nodes, mapped types", "[slurm]") {
  FakeRunner runner;
  runner.nodes = kNodes;
  Cluster c = cluster_from_slurm(read_nodes(runner), settings(), kCatalog, "sia");
  CHECK(runner.calls.front() == std::vector<std::string>{"scontrol", "-d", "-o", "show", "node"});
  CHECK(c.type_names() == "a100, t4, rtx2080ti");  // the order of the nodes
  REQUIRE(c.nodes.size() == 3);
  CHECK(c.nodes[0].name == "n1");
  CHECK(c.nodes[0].address == "10.0.0.1");
  CHECK(c.total_gpus() == 8);
}

TEST_CASE("the cluster from Slurm: bad input is one line", "[slurm]") {
  FakeRunner runner;
  runner.nodes = kNodes;
  auto nodes = read_nodes(runner);
  SlurmSettings s = settings();
  s.gres_types.clear();
  auto [status, message] = error_of([&] { cluster_from_slurm(nodes, s, kCatalog, "x"); });
  CHECK(status == 78);
  CHECK(message ==
        "slurm: node n3: GPU type \"l40s\" is neither mapped in slurm.gres_types nor a "
        "catalog GPU type");
  runner.nodes = "NodeName=m Gres=gpu:a100:2,gpu:t4:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).second ==
        "slurm: node m: GPUs of two types (a100, t4): sia needs one GPU type per node");
  runner.nodes = "NodeName=m Gres=gpu:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).first == 78);
  runner.nodes = "NodeName=m Gres=gpu:a100:2 State=DOWN\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }).first == 69);
  // A NodeAddr that is no host name (here bytes that are not text) is refused by name.
  runner.nodes = "NodeName=m NodeAddr=10.0.\xf7 Gres=gpu:a100:2 State=IDLE\n";
  CHECK(error_of([&] { cluster_from_slurm(read_nodes(runner), {}, kCatalog, "x"); }) ==
        std::pair<int, std::string>{78,
                                    "slurm: node m: NodeAddr is not a node address (a host "
                                    "name or address: printable ASCII, no white space, not "
                                    "starting with '-')"});
  runner.reachable = false;
  auto [st, msg] = error_of([&] { read_nodes(runner); });
  CHECK(st == 69);
  CHECK(msg ==
        "slurm: slurmctld not reachable (scontrol: slurm_load_node error: Unable to contact "
        "slurm controller (connect failure))");
}

TEST_CASE("usable GPUs: another user's jobs hold theirs, sia's own do not", "[slurm]") {
  FakeRunner runner;
  runner.nodes = kNodes;
  // n1: 3 in use -- 2 by sia's job 7, 1 by job 8 of another user with a forged mark.
  runner.jobs =
      "JobId=7 UserId=sia(990) JobState=RUNNING NodeList=n1 Nodes=n1 GRES=gpu:a100:2(IDX:0-1) "
      "Comment=sia:j:2\n"
      "JobId=8 UserId=bob(1001) JobState=RUNNING NodeList=n1 Nodes=n1 GRES=gpu:a100:1(IDX:2) "
      "Comment=sia:j:2\n";
  auto usable = usable_gpus(read_nodes(runner), read_jobs(runner), settings(), 990);
  CHECK(usable == std::map<std::string, long>{{"n1", 3}, {"n2", 2}, {"n3", 2}});
  runner.jobs = "JobId=9 UserId=sia(990) JobState=RUNNING NodeList=zz Comment=sia:k:0\n";
  auto [status, message] =
      error_of([&] { usable_gpus(read_nodes(runner), read_jobs(runner), settings(), 990); });
  CHECK(status == 65);
  CHECK(message == "slurm: job 9 (sia:k:0): its node list names unknown node zz");
}
