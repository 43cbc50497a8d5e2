// Limits on the solves behind the policies, counted in work and in wall-clock time. The
// work limits (simplex iterations per LP solve, branch-and-bound nodes per MIP solve) make
// a solve's answer a function of its input alone. The simulator runs on them only (no
// wall-clock limit: seconds infinite), so a run gives the same bytes on an idle machine and
// on a saturated one; the live programs (sia-solve, the controller) keep the wall-clock
// limit as a safety net, and with the default work limits it does not bind on an ordinary
// machine. policy/glpk_limits.hpp applies them to GLPK.
// Thread-safety: a plain value.
#pragma once

#include <limits>

namespace sia {

struct SolveLimits {
  double seconds = std::numeric_limits<double>::infinity();  // wall clock; infinity: none
  int iterations = 0;  // simplex iterations per LP solve; 0: none
  int nodes = 0;       // branch-and-bound nodes per MIP solve; 0: none
};

}  // namespace sia
