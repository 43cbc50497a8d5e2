#include "deadline/row_table.hpp"

#include <algorithm>

namespace sia::deadline {

std::vector<GoodputPoint> admission_table(const GoodputRow& row, double b0,
                                          const Cluster& cluster) {
  std::vector<GoodputPoint> out;
  if (!(b0 > 0)) return out;
  auto type_name = [&](int t) {
    return t >= 0 && t < static_cast<int>(cluster.types.size()) ? cluster.types[t].name
                                                                : std::string();
  };
  if (row.adaptivity == Adaptivity::rigid) {
    for (const auto& e : row.entries)
      out.push_back({type_name(e.config.type), e.config.gpus, e.raw_goodput / b0});
    return out;
  }
  std::vector<double> per_gpu(cluster.types.size(), 0.0);
  for (const auto& e : row.entries) {
    if (e.config.type < 0 || e.config.type >= static_cast<int>(per_gpu.size())) continue;
    double& p = per_gpu[e.config.type];
    p = std::max(p, e.raw_goodput / std::max(1, e.config.gpus));
  }
  for (std::size_t t = 0; t < cluster.types.size(); ++t) {
    if (!(per_gpu[t] > 0)) continue;
    for (int g = 1; g <= cluster.types[t].capacity(); ++g) {
      out.push_back({cluster.types[t].name, g, g * per_gpu[t] / b0});
    }
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
