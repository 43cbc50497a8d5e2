#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

static Cluster cluster_from_toml(const std::string& text) {
  auto docs = parse_documents(text, "cluster.toml", {"Cluster"}, ExitStatus::config);
  return cluster_from_document(docs.front());
}

TEST_CASE("the bundled clusters load", "[cluster]") {
  Cluster h = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  CHECK(h.name == "sia-hetero-64");
  REQUIRE(h.types.size() == 3);
  CHECK(h.type_names() == "t4, a100, rtx2080ti");
  CHECK(h.types[0].capacity() == 24);
  CHECK(h.types[1].capacity() == 16);
  CHECK(h.types[2].capacity() == 24);
  CHECK(h.total_gpus() == 64);
  CHECK(h.nodes.size() == 11);
  CHECK(h.nodes[6].name == "a100-0");
  CHECK(read_cluster(test::data_dir() + "/clusters/sia-physical-44.toml").total_gpus() == 44);
  Cluster homo = read_cluster(test::data_dir() + "/clusters/sia-homogeneous-64.toml");
  CHECK(homo.types.size() == 1);
  CHECK(homo.total_gpus() == 64);
}

TEST_CASE("types may be implied by node groups, names given or generated", "[cluster]") {
  Cluster c = cluster_from_toml(R"(
[[node_groups]]
gpu_type = "v100"
gpus_per_node = 8
count = 2
names = ["alpha", "beta"]
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 1
name_prefix = "g4-"
)");
  CHECK(c.type_names() == "v100, t4");
  CHECK(c.nodes[0].name == "alpha");
  CHECK(c.nodes[2].name == "g4-0");
  CHECK(c.nodes[2].index_in_type == 0);
}

TEST_CASE("cluster errors name the field and exit 78", "[cluster]") {
  auto e = error_of([] {
    cluster_from_toml("[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = -2\n");
  });
  CHECK(e.first == 78);
  CHECK(e.second ==
        "cluster.toml: node_groups[0].count: expected a positive integer, got the number -2");
  e = error_of([] {
    cluster_from_toml(
        "[[gpu_types]]\nname = \"t4\"\n[[node_groups]]\ngpu_type = \"a100\"\n"
        "gpus_per_node = 8\ncount = 1\n");
  });
  CHECK(e.second ==
        "cluster.toml: node_groups[0].gpu_type: unknown GPU type \"a100\" (declared: t4)");
  e = error_of([] {
    cluster_from_toml(
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 1\n"
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 8\ncount = 1\n");
  });
  CHECK(e.second.find("node_groups[1].gpus_per_node: GPU type \"t4\" already has nodes of 4") !=
        std::string::npos);
  e = error_of([] {
    cluster_from_toml(
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 2\nnames = [\"a\"]\n");
  });
  CHECK(e.second == "cluster.toml: node_groups[0].names: expected 2 names (count), got 1");
  e = error_of([] { cluster_from_toml("name = \"x\"\n"); });
  CHECK(e.second == "cluster.toml: node_groups: missing required field");
  // Node names and addresses reach command lines ([nodes] commands: ssh {address},
  // sia-run --node {node}) and paths (STATE/nodes/{node}): never a flag, never a path.
  e = error_of([] {
    cluster_from_toml(
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 1\nnames = [\"-x\"]\n");
  });
  CHECK(e.first == 78);
  CHECK(e.second ==
        "cluster.toml: node_groups[0].names: \"-x\" cannot name a node (letters, digits, '.', "
        "'_' or '-', not starting with '.' or '-', at most 253 characters)");
  e = error_of([] {
    cluster_from_toml(
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 1\n"
        "name_prefix = \"../\"\n");
  });
  CHECK(e.second.rfind("cluster.toml: node_groups[0].name_prefix: \"../0\" cannot name a node",
                       0) == 0);
  for (const char* address : {"-oProxyCommand=touch /tmp/x", "a b", ""}) {
    INFO(address);
    e = error_of([&] {
      cluster_from_toml(
          "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 1\n"
          "addresses = [\"" +
          std::string(address) + "\"]\n");
    });
    CHECK(e.first == 78);
    CHECK(e.second.find("node_groups[0].addresses: ") != std::string::npos);
  }
  CHECK(cluster_from_toml("[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = 1\n"
                          "addresses = [\"root@10.0.0.1\"]\n")
            .nodes[0]
            .address == "root@10.0.0.1");
}

TEST_CASE("an unknown key in a cluster is an error; what cluster_to_json writes reads back",
          "[cluster]") {
  auto e = error_of([] {
    cluster_from_toml("[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_nodes = 4\ncount = 1\n");
  });
  CHECK(e == std::pair<int, std::string>{
                 78,
                 "cluster.toml: node_groups[0].gpus_per_nodes: unknown key \"gpus_per_nodes\" "
                 "(did you mean \"gpus_per_node\"?)"});
  e = error_of([] {
    cluster_from_toml(
        "nodes = 3\n[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\n"
        "count = 1\n");
  });
  CHECK(e.second == "cluster.toml: nodes: unknown key \"nodes\"");
  e = error_of([] {
    cluster_from_toml(
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4294967297\n"
        "count = 1\n");
  });
  CHECK(e.first == 78);
  Cluster c = read_cluster(test::data_dir() + "/clusters/sia-physical-44.toml");
  auto doc = test::doc_from(
      dump_document("Cluster", nlohmann::json::object(), cluster_to_json(c), false), "Cluster");
  Cluster back = cluster_from_document(doc);
  CHECK(cluster_to_json(back) == cluster_to_json(c));
  Cluster cpu = read_cluster(test::data_dir() + "/clusters/cpu-example.toml");
  CHECK(cpu.total_gpus() == 4);
}
