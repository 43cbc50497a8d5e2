#include "policy/deadline_rows.hpp"

#include <algorithm>
#include <limits>

namespace sia {

std::optional<double> required_goodput(const GoodputRow& row) {
  return required_goodput(row, row.model.init_batch_size);
}

std::optional<double> required_goodput(const GoodputRow& row, double init_batch_size,
                                       bool restart) {
  if (!row.deadline_in || !row.progress || !(init_batch_size > 0)) return std::nullopt;
  const double work = std::max(0.0, row.progress->total - row.progress->done) * init_batch_size;
  const double left = *row.deadline_in - (restart ? row.restart_penalty : 0.0);
  if (!(left > 0)) return std::numeric_limits<double>::infinity();
  return work / left;
}

int min_satisfactory_entry(const GoodputRow& row, double need, const std::vector<int>& free_gpus) {
  int best = -1;
  for (std::size_t e = 0; e < row.entries.size(); ++e) {
    const GoodputEntry& en = row.entries[e];
    const int t = en.config.type;
    if (en.raw_goodput < need || t < 0 || t >= static_cast<int>(free_gpus.size()) ||
        en.config.gpus > free_gpus[t]) {
      continue;
    }
    if (best < 0) {
      best = static_cast<int>(e);
      continue;
    }
    const GoodputEntry& b = row.entries[best];
    if (en.config.gpus < b.config.gpus ||
        (en.config.gpus == b.config.gpus && en.raw_goodput > b.raw_goodput)) {
      best = static_cast<int>(e);
    }
  }
  return best;
}

}  // namespace sia
