// The analytic centre of the optimal face of the baselines' assignment LP
//
//   maximise sum_i value_i x_i  subject to  x >= 0,
//            sum_{i in job j} x_i <= 1                  (one row per job),
//            sum_{i on type t} weight_i x_i <= capacity_t (one row per GPU type),
//
// where every column belongs to exactly one job and one type. When the optimum is not
// unique (equal jobs, equal types) a simplex answers with a vertex of the optimal face --
// one of several equal jobs gets all the time, the others none -- while an interior-point
// method such as ECOS, which the Gavel of the Sia artifact solves its LP with (Narayanan et
// al., OSDI '20; Subramanya et al., SOSP '23), follows the central path, whose limit is
// the analytic centre of the optimal face (McLinden 1980; Gueler and Ye 1993): the point
// of that face maximising the sum of the logarithms of every slack that is not zero on
// the whole face, so equal jobs get equal time.
//
// central_optimum runs a primal-dual Mehrotra predictor-corrector method from a strictly
// feasible start, then follows the central path with pure Newton centring steps down to
// a duality measure of 1e-11 (relative to the largest value; at least 1e-9 when the
// normal equations grow too ill-conditioned before), so the answer is within about that
// of the analytic centre; the normal equations are solved through the Schur complement
// on the type rows (O(columns x types^2) per step). Deterministic: symmetric jobs get
// bit-for-bit symmetric arithmetic and so equal values.
// Thread-safety: a pure function.
#pragma once

#include <optional>
#include <vector>

namespace sia::baseline {

struct AssignmentLp {
  struct Column {
    int job = 0;        // 0 .. jobs - 1
    int type = 0;       // index into capacity
    double weight = 0;  // > 0: GPUs the column takes of its type per unit of x
    double value = 0;   // >= 0: objective coefficient
  };
  int jobs = 0;
  std::vector<double> capacity;  // > 0 per type
  std::vector<Column> columns;
};

// x per column at the analytic centre of the optimal face; nullopt when the method did
// not get that close within its iteration limit or `seconds` (the caller falls back).
std::optional<std::vector<double>> central_optimum(const AssignmentLp& lp, double seconds);

}  // namespace sia::baseline
