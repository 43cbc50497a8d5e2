// Which node may speak for a job (node_speaks_for), and the report records it lets through.
#include <catch2/catch.hpp>

#include "ctl/report_records.hpp"

using namespace sia;
using namespace sia::ctl;

namespace {

Placed on_node(const std::string& node) {
  Placed p;
  p.gpu_type = "t4";
  p.nodes = {{node, {0}}};
  return p;
}

}  // namespace

TEST_CASE("a node speaks for a job placed on it now or at any time before") {
  BookJob b;
  b.spec.name = "a";
  CHECK_FALSE(node_speaks_for(b, "t4-0"));  // never placed
  // Placed on t4-0, moved to t4-1, re-placed on t4-1 (other GPUs), then waiting: its
  // generation on t4-0 may have finished after all of that (a controller restart, a slow
  // stop), and that node's word must still count.
  b.history.push_back({1, 10, on_node("t4-0")});
  b.history.push_back({2, 20, on_node("t4-1")});
  Placed wider = on_node("t4-1");
  wider.nodes[0].gpus = {0, 1};
  b.history.push_back({3, 30, wider});
  b.history.push_back({4, 40, std::nullopt});
  CHECK(node_speaks_for(b, "t4-0"));
  CHECK(node_speaks_for(b, "t4-1"));
  CHECK_FALSE(node_speaks_for(b, "t4-2"));
  b.placed = on_node("t4-2");
  CHECK(node_speaks_for(b, "t4-2"));
}
