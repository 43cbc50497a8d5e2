#include "deadline/row_table.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace sia::deadline {

std::vector<GoodputPoint> admission_table(const GoodputRow& row, double b0,
                                          const Cluster& cluster) {
  std::vector<GoodputPoint> out;
  if (!(b0 > 0)) return out;
  auto type_name = [&](int t) {
    return t >= 0 && t < static_cast<int>(cluster.types.size()) ? cluster.types[t].name
                                                                : std::string();
  };
  std::map<std::pair<int, int>, double> best;  // (type, gpus) -> raw goodput
  for (const auto& e : row.entries) {
    if (e.config.type < 0 || e.config.type >= static_cast<int>(cluster.types.size())) continue;
    double& g = best[{e.config.type, e.config.gpus}];
    g = std::max(g, e.raw_goodput);
  }
  for (const auto& [config, raw] : best) {
    out.push_back({type_name(config.first), config.second, raw / b0});
  }
  return out;
}

double remaining_work(const GoodputRow& row) {
  return row.progress ? std::max(0.0, row.progress->total - row.progress->done) : 0.0;
}

GuaranteedJob guaranteed_question(const GoodputRow& row, double b0, const Cluster& cluster,
                                  double deadline, double now, double margin) {
  GuaranteedJob j;
  j.name = row.job;
  j.input.remaining_work = remaining_work(row);
  j.input.table = admission_table(row, b0, cluster);
  j.input.now = now;
  j.input.deadline = deadline;
  j.input.margin = margin;
  j.input.restart_overhead = row.restart_penalty;
  return j;
}

std::map<std::string, int> gpus_per_type(const Cluster& cluster) {
  std::map<std::string, int> out;
  for (const auto& t : cluster.types) out[t.name] += t.capacity();
  return out;
}

}  // namespace sia::deadline
