// Explanations of an allocation, for "why is my job pending": for a waiting job, which
// constraint kept it out (no valid configuration, waiting scoring better than a restart,
// no room on the GPU types it could use and who holds them); with --explain, for every job
// its value, restart factor and the best configuration it did not get.
// Thread-safety: pure function.
#pragma once

#include <functional>
#include <vector>

#include "core/allocation.hpp"
#include "core/configuration.hpp"
#include "core/goodput_matrix.hpp"
#include "policy/mckp.hpp"

namespace sia {

struct ExplainInput {
  const GoodputMatrix* matrix = nullptr;
  const std::vector<CapacityRow>* rows = nullptr;
  const MckpProblem* problem = nullptr;
  const MckpSolution* solution = nullptr;
  const std::vector<double>* factor = nullptr;  // restart factor per job
  const std::vector<bool>* pinned = nullptr;
  std::function<int(std::size_t, int)> entry_of;       // (job, column) -> entry or -1
  std::function<double(std::size_t, int)> goodput_of;  // (job, column) -> goodput'
};

// Fills `reason` for waiting jobs, and `explain` for all jobs when `detailed`.
// `out.jobs` must be in the matrix's row order.
void explain_allocation(const ExplainInput& in, Allocation& out, bool detailed);

}  // namespace sia
