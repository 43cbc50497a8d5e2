#include "policy/explain.hpp"

#include <cstdio>

namespace sia {

namespace {

std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace

void explain_allocation(const ExplainInput& in, Allocation& out, bool detailed) {
  const GoodputMatrix& m = *in.matrix;
  const auto& rows = *in.rows;
  const MckpProblem& p = *in.problem;
  const MckpSolution& s = *in.solution;
  const Cluster& cluster = m.cluster;
  std::vector<double> used(rows.size(), 0.0), pinned_use(rows.size(), 0.0);
  for (std::size_t i = 0; i < p.jobs.size(); ++i) {
    if (s.pick[i] < 0) continue;
    for (auto [r, a] : p.jobs[i][s.pick[i]].usage) {
      used[r] += a;
      if ((*in.pinned)[i]) pinned_use[r] += a;
    }
  }
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const GoodputRow& row = m.jobs[i];
    JobAllocation& ja = out.jobs[i];  // in row order
    const int pick = s.pick[i];
    // The best column it did not get, by value.
    int alt = -1;
    for (std::size_t c = 0; c < p.jobs[i].size(); ++c) {
      if (static_cast<int>(c) == pick) continue;
      if (alt < 0 || p.jobs[i][c].value > p.jobs[i][alt].value) alt = static_cast<int>(c);
    }
    if (pick < 0) {
      if (row.entries.empty()) {
        ja.reason = "no valid configuration: no GPU type it may use can hold " +
                    std::to_string(row.min_gpus) + " GPU(s)";
      } else if (p.jobs[i].empty() || p.jobs[i][alt].value <= 0) {
        double g = p.jobs[i].empty() ? 0 : in.goodput_of(i, alt);
        ja.reason = "waiting scores better: its best configuration is worth goodput " + num(g) +
                    " after the restart factor " + num((*in.factor)[i]) +
                    ", below what lambda_n (and lambda_a) require";
      } else {
        std::string why;
        for (auto [r, a] : p.jobs[i][alt].usage) {
          if (used[r] + a <= rows[r].capacity + 1e-9) continue;
          if (!why.empty()) why += "; ";
          const std::string& type = cluster.types[rows[r].type].name;
          if (rows[r].size_class > 1) {
            why += "no free " + std::to_string(rows[r].size_class) + "-GPU block on " + type;
          } else {
            why += "no room on " + type + ": " + num(used[r], 6) + "/" + num(rows[r].capacity, 6) +
                   " GPUs allocated";
          }
          if (pinned_use[r] > 0) {
            why += " (" + num(pinned_use[r], 6) + " held by pinned jobs)";
          }
        }
        if (why.empty()) why = "other jobs' allocations are worth more";
        int e = in.entry_of(i, alt);
        ja.reason = "capacity: its best configuration " +
                    (e >= 0 ? format_config(row.entries[e].config, cluster) : std::string("?")) +
                    " does not fit: " + why;
      }
    }
    if (!detailed) continue;
    Explanation ex;
    ex.restart_factor = (*in.factor)[i];
    ex.pinned = (*in.pinned)[i];
    ex.max_gpus = row.max_gpus;
    if (pick >= 0) {
      ex.value = p.jobs[i][pick].value;
      ex.goodput = in.goodput_of(i, pick);
    }
    if (alt >= 0) {
      int e = in.entry_of(i, alt);
      if (e >= 0) {
        ex.alternative = row.entries[e].config;
        ex.alternative_goodput = in.goodput_of(i, alt);
        ex.alternative_value = p.jobs[i][alt].value;
      }
    }
    ja.explain = ex;
  }
}

}  // namespace sia
