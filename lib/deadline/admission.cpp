#include "deadline/admission.hpp"

#include <algorithm>
#include <cmath>

namespace sia::deadline {

double time_to_finish(double work, double goodput, double restart_overhead) {
  if (!(work > 0)) return 0;
  if (!(goodput > 0) || !std::isfinite(goodput)) return kNever;
  return std::max(0.0, restart_overhead) + work / goodput;
}

double required_goodput(double remaining_work, double now, double deadline,
                        double restart_overhead) {
  if (!(remaining_work > 0)) return 0;
  const double left = deadline - now - std::max(0.0, restart_overhead);
  return left > 0 ? remaining_work / left : kNever;
}

AdmissionPlan plan_admission(const AdmissionInput& in) {
  AdmissionPlan plan;
  const double window = in.deadline - in.now;
  const double margin = std::isfinite(in.margin) ? std::max(0.0, in.margin) : 0.0;
  for (const auto& p : in.table) {
    auto it = in.free_gpus.find(p.gpu_type);
    if (p.gpus <= 0 || it == in.free_gpus.end() || p.gpus > it->second) continue;
    const double t = time_to_finish(in.remaining_work, p.goodput, in.restart_overhead);
    if (t == kNever) continue;
    if (in.now + t < plan.best_finish) {
      plan.best_finish = in.now + t;
      plan.fastest = p;
    }
    const double planned =
        time_to_finish(in.remaining_work * (1 + margin), p.goodput, in.restart_overhead);
    if (!(planned <= window)) continue;
    const double cost = p.gpus * t / 3600;
    // Equal costs (a linear model): the fewest GPUs, which leaves the most to the others.
    const bool same_cost = std::abs(cost - plan.gpu_hours) <= 1e-9 * cost;
    if (!plan.config || (cost < plan.gpu_hours && !same_cost) ||
        (same_cost && (p.gpus < plan.config->gpus ||
                       (p.gpus == plan.config->gpus && in.now + t < plan.finish)))) {
      plan.config = p;
      plan.finish = in.now + t;
      plan.gpu_hours = cost;
    }
  }
  plan.admitted = plan.config.has_value();
  return plan;
}

std::vector<OrderedAdmission> admit_in_order(const std::vector<GuaranteedJob>& jobs,
                                             const std::map<std::string, int>& total_gpus) {
  std::map<std::string, int> free = total_gpus;
  std::vector<OrderedAdmission> out;
  for (const auto& j : jobs) {
    AdmissionInput in = j.input;
    in.free_gpus = free;
    OrderedAdmission a{j.name, plan_admission(in)};
    if (a.plan.admitted) {
      free[a.plan.config->gpu_type] -= a.plan.config->gpus;
    } else if (j.held && a.plan.fastest) {
      free[a.plan.fastest->gpu_type] -= a.plan.fastest->gpus;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace sia::deadline
