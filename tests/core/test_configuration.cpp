#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/configuration.hpp"
#include "test_util.hpp"

using namespace sia;

static std::vector<std::pair<int, int>> shapes(const std::vector<Config>& cs) {
  std::vector<std::pair<int, int>> out;
  for (const auto& c : cs) out.push_back({c.nodes, c.gpus});
  return out;
}

TEST_CASE("power-of-two nodes: single-node powers of two, then whole nodes", "[configuration]") {
  using V = std::vector<std::pair<int, int>>;
  CHECK(shapes(configs_for_type(0, 4, 6)) ==
        V{{1, 1}, {1, 2}, {1, 4}, {2, 8}, {3, 12}, {4, 16}, {5, 20}, {6, 24}});
  CHECK(shapes(configs_for_type(0, 8, 2)) == V{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {2, 16}});
  CHECK(shapes(configs_for_type(0, 1, 3)) == V{{1, 1}, {2, 2}, {3, 3}});
}

TEST_CASE("the artifact's 19 configurations on the heterogeneous cluster", "[configuration]") {
  Cluster c = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  auto all = configs_for_cluster(c);
  CHECK(all.size() == 19);
  CHECK(all[8] == Config{1, 1, 1});   // a100 starts at column 8
  CHECK(all[13] == Config{2, 1, 1});  // rtx2080ti at 13
  CHECK(all.back() == Config{2, 3, 24});
}

TEST_CASE("limits cap nodes and GPUs", "[configuration]") {
  ConfigLimits l;
  l.max_nodes = 16;
  l.max_gpus = 64;
  auto cs = configs_for_type(0, 4, 192, l);
  CHECK(cs.back() == Config{0, 16, 64});
  CHECK(cs.size() == 3 + 15);
}

TEST_CASE("a 6-GPU node is split into virtual nodes of 4 and 2", "[configuration]") {
  using V = std::vector<std::pair<int, int>>;
  CHECK(virtual_node_sizes(6) == std::vector<int>{4, 2});
  CHECK(virtual_node_sizes(7) == std::vector<int>{4, 2, 1});
  CHECK(virtual_node_sizes(8) == std::vector<int>{8});
  CHECK(largest_virtual_node(6) == 4);
  CHECK(shapes(configs_for_type(0, 6, 3)) == V{{1, 1}, {1, 2}, {1, 4}, {1, 6}, {2, 12}, {3, 18}});
  CHECK(is_whole_nodes({0, 1, 4}, 6));
  CHECK(is_whole_nodes({0, 2, 12}, 6));
  CHECK_FALSE(is_whole_nodes({0, 2, 8}, 6));
}

TEST_CASE("size-class rows make virtual-node allocations placeable", "[configuration]") {
  auto docs = parse_documents("[[node_groups]]\ngpu_type = \"x\"\ngpus_per_node = 6\ncount = 2\n",
                              "c.toml", {"Cluster"});
  Cluster c = cluster_from_document(docs.front());
  auto rows = capacity_rows(c);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].size_class == 1);
  CHECK(rows[0].capacity == 12);
  CHECK(rows[1].size_class == 4);
  CHECK(rows[1].capacity == 8);  // one 4-GPU block per node
  // Three 4-GPU jobs: 12 <= 12 GPUs, but 12 > 8 in the size-4 row: rejected, as it must be.
  CHECK(3 * row_usage(rows[1], {0, 1, 4}, 6) > rows[1].capacity);
  // Two 4-GPU jobs and two 2-GPU jobs fit.
  CHECK(2 * row_usage(rows[1], {0, 1, 4}, 6) + 2 * row_usage(rows[1], {0, 1, 2}, 6) <= 8);
  // A whole node uses its 4-block in the size-4 row.
  CHECK(row_usage(rows[1], {0, 1, 6}, 6) == 4);
  CHECK(row_usage(rows[1], {0, 2, 12}, 6) == 8);
  // Power-of-two nodes need no extra row.
  Cluster h = read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
  CHECK(capacity_rows(h).size() == 3);
}
