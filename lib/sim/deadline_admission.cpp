#include "sim/deadline_admission.hpp"

#include <algorithm>
#include <limits>

namespace sia {

AdmissionDecision admit(const AdmissionInput& in) {
  AdmissionDecision best;  // admitted: the cheapest; else the earliest finish
  best.finish = std::numeric_limits<double>::infinity();
  double best_cost = std::numeric_limits<double>::infinity();
  const double work = in.work * (1 + in.margin);
  for (std::size_t k = 0; k < in.options.size(); ++k) {
    const AdmissionOption& o = in.options[k];
    if (!(o.rate > 0) || o.gpus <= 0 || o.type < 0 ||
        o.type >= static_cast<int>(in.free_gpus.size()) || o.gpus > in.free_gpus[o.type]) {
      continue;
    }
    const double seconds = work / o.rate;
    const double finish = in.now + in.restart + seconds;
    const double cost = seconds * o.gpus;
    const bool meets = finish <= in.deadline;
    // Cheapest; equal costs (linear rates): the fewest GPUs.
    const bool cheaper = !best.admitted || cost < best_cost * (1 - 1e-9) ||
                         (cost <= best_cost * (1 + 1e-9) && o.gpus < in.options[best.option].gpus);
    if (meets && cheaper) {
      best = {true, static_cast<int>(k), finish};
      best_cost = std::min(cost, best_cost);
    } else if (!meets && !best.admitted && finish < best.finish) {
      best = {false, static_cast<int>(k), finish};
    }
  }
  return best;
}

}  // namespace sia
