#include "policy/fairness_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "policy/themis_app.hpp"
#include "policy/themis_model.hpp"

namespace sia {

namespace {

double n_avg_of(const std::map<std::string, double>& n_avg, const std::string& name) {
  auto it = n_avg.find(name);
  return it == n_avg.end() ? 1.0 : std::max(1.0, it->second);
}

bool usable(const FairnessFigure& f) {
  return f.t_id > 0 && std::isfinite(f.t_id) && f.t_sh > 0 && std::isfinite(f.t_sh);
}

}  // namespace

int fairness_units(const GoodputMatrix& m) {
  std::set<std::string> units;
  for (const GoodputRow& row : m.jobs) units.insert(row.app ? "app:" + row.app->name : row.job);
  return static_cast<int>(units.size());
}

FairnessEstimate estimate_fairness(const GoodputMatrix& m,
                                   const std::map<std::string, Config>& given,
                                   const std::map<std::string, double>& job_n_avg,
                                   const std::map<std::string, double>& app_n_avg, double wait,
                                   const std::map<std::string, double>& measured) {
  const Cluster& cluster = m.cluster;
  const std::vector<ThemisRow> rows = themis_rows(cluster);
  FairnessEstimate out;
  struct AppTrials {
    std::vector<ThemisTrial> trials;
    int held = 0;
    bool measured = true;  // every trial's rate is measured
  };
  std::map<std::string, AppTrials> apps;
  for (const GoodputRow& row : m.jobs) {
    if (!row.progress || !(row.progress->total > 0)) continue;
    const std::vector<ThemisGang> gangs = themis_gangs(row, cluster, rows);
    const ThemisGang* best = nullptr;
    for (const ThemisGang& g : gangs) {
      if (!best || g.rate > best->rate) best = &g;
    }
    if (!best) continue;
    const double remaining = std::max(0.0, row.progress->total - row.progress->done);
    const auto got = given.find(row.job);
    auto model_rate = [&](const Config& c) {
      double rate = 0;
      for (const ThemisGang& g : gangs) {
        if (g.config == c) rate = g.rate;
      }
      return rate > 0 ? rate : themis_rate(row, cluster, gangs, c.type, c.gpus);
    };
    // The measured rate over the model's where the job runs: every rate scales by it.
    double scale = 1;
    FairnessFigure f;
    if (auto it = measured.find(row.job); it != measured.end() && it->second > 0 && row.current) {
      const double model = model_rate(*row.current);
      if (model > 0 && std::isfinite(it->second / model)) {
        scale = it->second / model;
        f.measured = true;
      }
    }
    f.t_id =
        themis_ideal_time(row, cluster, gangs, n_avg_of(job_n_avg, row.job), row.progress->total) /
        scale;
    if (got == given.end()) {
      f.t_sh = row.age + wait + remaining / (best->rate * scale);
    } else {
      const double rate = model_rate(got->second) * scale;
      f.t_sh = row.age + (rate > 0 ? remaining / rate : INFINITY);
      if (row.current && *row.current != got->second) f.t_sh += row.restart_penalty;
    }
    if (usable(f)) out.jobs[row.job] = f;
    if (row.app) {
      AppTrials& a = apps[row.app->name];
      a.trials.push_back({*row.app, row.progress->done, row.progress->total, row.age,
                          best->config.gpus, best->rate * scale});
      if (got != given.end()) a.held += got->second.gpus;
      a.measured = a.measured && f.measured;
    }
  }
  const double cluster_gpus = cluster.total_gpus();
  for (const auto& [name, a] : apps) {
    int started = 0;
    const ThemisApp model = themis_app_model(a.trials, &started);
    const double n_avg = n_avg_of(app_n_avg, name);
    const int max_demand =
        std::min(cluster.total_gpus(), std::max(1, started) * model.gpus_per_trial);
    FairnessFigure f;
    f.measured = a.measured;
    f.t_id = themis_app_ideal_time(model, cluster_gpus, n_avg, max_demand);
    if (a.held > 0) {
      f.t_sh = themis_app_shared_time(model, a.held);
    } else {
      const int share = std::max(model.gpus_per_trial,
                                 std::min(max_demand, static_cast<int>(cluster_gpus / n_avg)));
      f.t_sh = model.elapsed + wait + themis_app_remaining(model, share);
    }
    if (usable(f)) out.apps[name] = f;
  }
  return out;
}

}  // namespace sia
