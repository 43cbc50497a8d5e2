// SolveLimits applied to GLPK: the simplex's time and iteration limits, and a node limit
// for glp_intopt (whose glp_iocp has none) enforced from its callback. Internal to
// lib/policy (it includes glpk.h).
// Thread-safety: the functions touch only their arguments; a NodeLimit belongs to one solve.
#pragma once

#include <glpk.h>

#include "policy/solve_limits.hpp"

namespace sia {

// GLPK's tm_lim (milliseconds) for `seconds` left: at least 1, INT_MAX when not finite.
int glpk_ms(double seconds);

// Sets smcp.tm_lim from `seconds` left and smcp.it_lim from limits.iterations.
void set_simplex_limits(glp_smcp& smcp, double seconds, const SolveLimits& limits);

// Ends a glp_intopt search once it has created `limit` nodes (0: never). Call on() from
// the iocp callback on every reason; `hit` then says whether the limit ended the search.
struct NodeLimit {
  int limit = 0;
  bool hit = false;
  void on(glp_tree* tree);
};

// The callback for a glp_intopt whose only business in it is the node limit: cb_info is
// the NodeLimit.
void node_limit_callback(glp_tree* tree, void* node_limit);

}  // namespace sia
