#include <catch2/catch.hpp>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "round/reservations.hpp"
#include "round/take_back.hpp"
#include "test_util.hpp"

using namespace sia;
using sia::test::error_of;

namespace {

// t4: 6 nodes of 4 GPUs (t4-0 .. t4-5); a100: 2 of 8; rtx2080ti: 3 of 8.
Cluster hetero() {
  return read_cluster(test::data_dir() + "/clusters/sia-hetero-64.toml");
}

std::vector<Reservation> from_toml(const std::string& text) {
  const Document doc =
      parse_documents(text, "reservations.toml", {"Reservations"}, ExitStatus::config).front();
  return parse_reservations(doc.data(), hetero());
}

}  // namespace

TEST_CASE("a reservation holds its GPUs in its window and by its steps", "[reservation]") {
  const auto rs = from_toml(R"(
[[reservation]]
gpu_type = "a100"
gpus = 8
daily = "08:00-20:00"
steps = [{at = 0, gpus = 4}, {at = 90000, gpus = 0}]

[[reservation]]
gpu_type = "t4"
gpus = 6
daily = "20:00-02:00"

[[reservation]]
gpu_type = "rtx2080ti"
gpus = 8
)");
  REQUIRE(rs.size() == 3);
  const Reservation& a = rs[0];
  CHECK(held_gpus(a, 0) == 4);                 // midnight: its first step
  CHECK(held_gpus(a, 8 * 3600) == 8);          // 08:00, the window opens
  CHECK(held_gpus(a, 20 * 3600 - 1) == 8);     // 19:59:59
  CHECK(held_gpus(a, 20 * 3600) == 4);         // 20:00, closed: the step again
  CHECK(held_gpus(a, 90000) == 0);             // day 2, 01:00: the last step
  CHECK(held_gpus(a, 86400 + 9 * 3600) == 8);  // day 2, 09:00
  CHECK(held_gpus(rs[1], 21 * 3600) == 6);     // a window past midnight
  CHECK(held_gpus(rs[1], 3600) == 6);
  CHECK(held_gpus(rs[1], 2 * 3600) == 0);
  CHECK(held_gpus(rs[2], 12345) == 8);  // neither: always

  // Whole nodes per type: t4 owns 6 GPUs -> 2 nodes of 4; a100 4 GPUs -> 1 node of 8.
  const Cluster c = hetero();
  ReservedNodes at_midnight = reserved_nodes(rs, c, 0);
  CHECK(at_midnight.owned == std::vector<int>{2, 1, 1});
  CHECK(at_midnight.held == std::vector<int>{2, 1, 1});
  CHECK(at_midnight.lent_gpus(c) == 0);
  ReservedNodes at_three = reserved_nodes(rs, c, 90000 + 7200);  // day 2, 03:00
  CHECK(at_three.held == std::vector<int>{0, 0, 1});
  CHECK(at_three.lent_gpus(c) == 2 * 4 + 8);
}

TEST_CASE("the most nodes reservations hold over a span", "[reservation]") {
  const auto rs = from_toml(R"(
[[reservation]]
gpu_type = "a100"
gpus = 8
daily = "08:00-20:00"
steps = [{at = 0, gpus = 4}, {at = 90000, gpus = 0}]

[[reservation]]
gpu_type = "t4"
gpus = 6
steps = [{at = 0, gpus = 0}, {at = 3600, gpus = 5}, {at = 7200, gpus = 1}]

[[reservation]]
gpu_type = "t4"
gpus = 2
daily = "23:00-23:30"
steps = [{at = 0, gpus = 0}]
)");
  const Cluster c = hetero();  // t4 (4/node), a100 (8/node), rtx2080ti (8/node)
  // Midnight to 01:00: a100 half held by its step (one node), t4 none.
  CHECK(most_held_nodes(rs, c, 0, 3599) == std::vector<int>{0, 1, 0});
  // To 01:30: t4's step to 5 GPUs (two nodes) counts though it ends at 02:00.
  CHECK(most_held_nodes(rs, c, 0, 5400) == std::vector<int>{2, 1, 0});
  // From 02:00 to 22:59 on day 2 (step 0 after 25:00): t4 one node, a100's window at 08:00.
  CHECK(most_held_nodes(rs, c, 7200, 86400 + 22 * 3600) == std::vector<int>{1, 1, 0});
  // From 25:00 on (a100's step gone): its window on day 2 at 08:00 still holds its node;
  // before 08:00 nothing does.
  CHECK(most_held_nodes(rs, c, 90000, 86400 + 7 * 3600) == std::vector<int>{1, 0, 0});
  CHECK(most_held_nodes(rs, c, 90000, 86400 + 8 * 3600) == std::vector<int>{1, 1, 0});
  // A window of 30 minutes, days after: 1 t4 GPU (step) + 2 in the window = one node.
  CHECK(most_held_nodes(rs, c, 90000, 5 * 86400)[0] == 1);
  // A span that ends before it starts is its start alone.
  CHECK(most_held_nodes(rs, c, 3600, 0) == std::vector<int>{2, 1, 0});
  // GPUs left per type over a span.
  const auto left = gpus_unreserved(rs, c, 0, 5400);
  CHECK(left.at("t4") == c.types[0].capacity() - 8);
  CHECK(left.at("a100") == c.types[1].capacity() - 8);
  CHECK(left.at("rtx2080ti") == c.types[2].capacity());
  CHECK(gpus_unreserved({}, c, 0, 1e9).at("t4") == c.types[0].capacity());
}

TEST_CASE("a bad reservations file is one line naming the file and field", "[reservation]") {
  auto status_and = [](const std::string& text) { return error_of([&] { from_toml(text); }); };
  auto [s1, m1] = status_and("[[reservation]]\ngpu_type = \"v100\"\ngpus = 8\n");
  CHECK(s1 == 78);
  CHECK(m1.find("reservations.toml: reservation[0].gpu_type: expected a GPU type of cluster") !=
        std::string::npos);
  auto [s2, m2] = status_and(
      "[[reservation]]\ngpu_type = \"a100\"\ngpus = 12\n[[reservation]]\ngpu_type = "
      "\"a100\"\ngpus = 8\n");
  CHECK(s2 == 78);
  CHECK(m2 ==
        "reservations.toml: reservation[1].gpus: the reservations of a100 own 20 GPUs, "
        "more than its 16");
  auto [s3, m3] = status_and("[[reservation]]\ngpu_type = \"t4\"\ngpus = 4\ndaily = \"8-20\"\n");
  CHECK(s3 == 78);
  CHECK(m3.find("reservation[0].daily: expected a UTC window \"HH:MM-HH:MM\"") !=
        std::string::npos);
  auto [s4, m4] = status_and(
      "[[reservation]]\ngpu_type = \"t4\"\ngpus = 4\nsteps = [{at = 10, gpus = 4}, {at = 5, gpus "
      "= 0}]\n");
  CHECK(s4 == 78);
  CHECK(m4.find("reservation[0].steps[1].at: expected a time after the previous step's") !=
        std::string::npos);
  auto [s5, m5] =
      status_and("[[reservation]]\ngpu_type = \"t4\"\ngpus = 4\nsteps = [{at = 0, gpus = 5}]\n");
  CHECK(s5 == 78);
  CHECK(m5.find("reservation[0].steps[0].gpus: expected an integer from 0 to 4") !=
        std::string::npos);
  auto [s6, m6] = status_and("[[reservation]]\ngpu_type = \"t4\"\ngpu = 4\n");
  CHECK(s6 == 78);
  CHECK(m6.find("reservation[0].gpu") != std::string::npos);
}

TEST_CASE("take-back: idle nodes first, then the nodes whose jobs lose fewest GPUs",
          "[reservation]") {
  const Cluster c = hetero();
  // t4-0, t4-1: d (8 GPUs); t4-2: a 2 + b 2; t4-3: b 2 + c 2 (b: 4 GPUs); t4-4: e 4 and
  // t4-5: e 1 + f 3 (e: 5 GPUs). Costs: t4-0 8, t4-1 8, t4-2 6, t4-3 6, t4-4 5, t4-5 8.
  const std::vector<NodeUse> uses = {{"t4-0", "d", 4}, {"t4-1", "d", 4}, {"t4-2", "a", 2},
                                     {"t4-2", "b", 2}, {"t4-3", "b", 2}, {"t4-3", "c", 2},
                                     {"t4-4", "e", 4}, {"t4-5", "e", 1}, {"t4-5", "f", 3}};
  auto pick = [&](int t4_nodes) { return choose_reserved(c, {t4_nodes, 0, 0}, {}, uses); };
  // 1: t4-4 (5), stopping e.
  ReservedChoice one = pick(1);
  CHECK(one.nodes == std::set<std::string>{"t4-4"});
  REQUIRE(one.taken_back.size() == 1);
  CHECK(one.taken_back[0].jobs == std::vector<std::string>{"e"});
  CHECK(one.taken_back[0].gpus == 4);
  // 2: with e stopped t4-5 costs only f's 3 (it would cost 8 with e still running).
  CHECK(pick(2).nodes == std::set<std::string>{"t4-4", "t4-5"});
  // 3: t4-2 and t4-3 cost 6 each, 4 GPUs in use each: the later, t4-3, stopping b and c.
  CHECK(pick(3).nodes == std::set<std::string>{"t4-3", "t4-4", "t4-5"});
  // 4: t4-2 now costs a's 2.
  ReservedChoice four = pick(4);
  CHECK(four.nodes == std::set<std::string>{"t4-2", "t4-3", "t4-4", "t4-5"});
  REQUIRE(four.taken_back.size() == 4);
  CHECK(four.taken_back[3].node == "t4-2");
  CHECK(four.taken_back[3].jobs == std::vector<std::string>{"a", "b"});
  // 5: t4-0 and t4-1 cost 8 each: t4-1; 6: t4-0 costs nothing more (d stopped).
  CHECK(pick(5).nodes.count("t4-1") == 1);
  CHECK(pick(6).nodes.size() == 6);
  CHECK(pick(9).nodes.size() == 6);  // clamped to the type's nodes

  // An idle node goes first; among idle nodes, the latest in the cluster's order.
  const std::vector<NodeUse> some = {{"rtx2080ti-2", "x", 1}};
  ReservedChoice idle = choose_reserved(c, {0, 0, 2}, {}, some);
  CHECK(idle.nodes == std::set<std::string>{"rtx2080ti-0", "rtx2080ti-1"});
  CHECK(idle.taken_back.empty());
  // Fewer GPUs in use breaks a tie of the GPUs lost.
  const std::vector<NodeUse> spread = {{"rtx2080ti-0", "y", 6}, {"rtx2080ti-1", "y", 2}};
  ReservedChoice y = choose_reserved(c, {0, 0, 2}, {}, spread);
  CHECK(y.nodes == std::set<std::string>{"rtx2080ti-1", "rtx2080ti-2"});
  REQUIRE(y.taken_back.size() == 1);
  CHECK(y.taken_back[0].gpus == 2);
}

TEST_CASE("take-back: last round's reserved nodes stay reserved", "[reservation]") {
  const Cluster c = hetero();
  const std::vector<NodeUse> none;
  // Kept although an idle node later in the order would be picked afresh.
  CHECK(choose_reserved(c, {1, 0, 0}, {"t4-0"}, none).nodes == std::set<std::string>{"t4-0"});
  // Shrinking: the earliest in the order is lent back first.
  CHECK(choose_reserved(c, {1, 0, 0}, {"t4-0", "t4-2"}, none).nodes ==
        std::set<std::string>{"t4-2"});
  // Growing: the old ones and the cheapest new ones.
  CHECK(choose_reserved(c, {2, 0, 0}, {"t4-0"}, {{"t4-5", "j", 4}}).nodes ==
        std::set<std::string>{"t4-0", "t4-4"});
}

TEST_CASE("the cluster lent to training keeps its GPU types", "[reservation]") {
  const Cluster c = hetero();
  const Cluster lent = cluster_lending(c, {"a100-0", "a100-1", "t4-5"});
  REQUIRE(lent.types.size() == 3);
  CHECK(lent.types[0].node_count == 5);
  CHECK(lent.types[1].node_count == 0);
  CHECK(lent.types[1].capacity() == 0);
  CHECK(lent.nodes.size() == c.nodes.size() - 3);
  CHECK(lent.nodes_of_type(1).empty());
  CHECK(lent.type_index("rtx2080ti") == 2);
  CHECK(lent.nodes[lent.nodes_of_type(2)[0]].index_in_type == 0);
}
