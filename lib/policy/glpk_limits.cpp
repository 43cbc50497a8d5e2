#include "policy/glpk_limits.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace sia {

int glpk_ms(double seconds) {
  if (!std::isfinite(seconds) || seconds * 1000 >= INT_MAX) return INT_MAX;
  return std::max(1, static_cast<int>(seconds * 1000));
}

void set_simplex_limits(glp_smcp& smcp, double seconds, const SolveLimits& limits) {
  smcp.tm_lim = glpk_ms(seconds);
  smcp.it_lim = limits.iterations > 0 ? limits.iterations : INT_MAX;
}

void NodeLimit::on(glp_tree* tree) {
  if (limit <= 0 || hit || glp_ios_reason(tree) != GLP_ISELECT) return;
  int active = 0, current = 0, total = 0;
  glp_ios_tree_size(tree, &active, &current, &total);
  if (total >= limit) {
    hit = true;
    glp_ios_terminate(tree);
  }
}

void node_limit_callback(glp_tree* tree, void* node_limit) {
  static_cast<NodeLimit*>(node_limit)->on(tree);
}

}  // namespace sia
