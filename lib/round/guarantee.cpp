#include "round/guarantee.hpp"

#include <algorithm>
#include <vector>

#include "policy/deadline_rows.hpp"

namespace sia {

void mark_deadline(GoodputRow& row, JobClass job_class, const std::optional<double>& deadline,
                   double now) {
  row.job_class = job_class;
  if (deadline) row.deadline_in = *deadline - now;
}

void keep_on_schedule(GoodputRow& row, double b0) {
  if (row.entries.empty()) return;
  const auto need = required_goodput(row, b0);
  if (!need) return;
  std::vector<GoodputEntry> kept;
  for (const auto& e : row.entries) {
    if (e.raw_goodput >= *need) kept.push_back(e);
  }
  if (kept.empty()) {  // none reaches it yet: the fastest type's configurations
    const auto best = std::max_element(
        row.entries.begin(), row.entries.end(),
        [](const GoodputEntry& a, const GoodputEntry& b) { return a.raw_goodput < b.raw_goodput; });
    for (const auto& e : row.entries) {
      if (e.config.type == best->config.type) kept.push_back(e);
    }
  }
  for (auto& e : kept) e.goodput *= kGuaranteedBoost;
  row.entries = std::move(kept);
}

}  // namespace sia
