#include "round/guarantee.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "policy/deadline_rows.hpp"

namespace sia {

void mark_deadline(GoodputRow& row, JobClass job_class, const std::optional<double>& deadline,
                   double now) {
  row.job_class = job_class;
  if (deadline) row.deadline_in = *deadline - now;
}

void keep_on_schedule(GoodputRow& row, double b0, double margin) {
  if (row.entries.empty()) return;
  auto need = required_goodput(row, b0);
  if (!need) return;
  const double headroom = 1 + (std::isfinite(margin) ? std::max(0.0, margin) : 0.0);
  *need *= headroom;
  std::vector<GoodputEntry> kept;
  // On schedule where it runs (no restart to pay): it stays, unless a move at least
  // doubles its goodput (worth a checkpoint-restore; Sia then weighs it as it would).
  const GoodputEntry* here = nullptr;
  if (row.current) {
    const double stay = headroom * required_goodput(row, b0, false).value_or(0);
    for (const auto& e : row.entries) {
      if (e.config == *row.current && e.raw_goodput >= stay) here = &e;
    }
  }
  for (const auto& e : row.entries) {
    const bool keep = here ? &e == here || e.raw_goodput >= kWorthAMove * here->raw_goodput
                           : e.raw_goodput >= *need;
    if (keep) kept.push_back(e);
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
