#include "sim/sim_apps.hpp"

#include <algorithm>
#include <map>

namespace sia {

std::vector<SimApp> group_apps(const std::vector<JobSpec>& workload,
                               const std::vector<AppSpec>& specs, std::vector<int>& app_of) {
  std::vector<SimApp> apps;
  app_of.assign(workload.size(), -1);
  std::map<std::string, int> index;
  for (std::size_t i = 0; i < workload.size(); ++i) {
    const std::string& a = workload[i].app;
    const std::string key = a.empty() ? "\n" + workload[i].name : a;
    auto it = index.find(key);
    if (it == index.end()) {
      AppSpec spec;
      for (const auto& x : specs) {
        if (!a.empty() && x.name == a) spec = x;
      }
      spec.trial_template.reset();
      it = index.emplace(key, static_cast<int>(apps.size())).first;
      SimApp app;
      app.name = a.empty() ? workload[i].name : a;
      app.spec = std::move(spec);
      apps.push_back(std::move(app));
    }
    app_of[i] = it->second;
    apps[it->second].trials.push_back(static_cast<int>(i));
  }
  for (auto& app : apps) {
    app.bracket = hyperband_brackets(app.spec.scheduler, static_cast<int>(app.trials.size()));
    for (int k = 0; k < app_brackets(app.spec.scheduler); ++k) {
      app.brackets.push_back(bracket_halving(app.spec, k, 0));
    }
  }
  return apps;
}

AppRef trial_ref(const SimApp& app, int job) {
  const auto t = static_cast<std::size_t>(std::find(app.trials.begin(), app.trials.end(), job) -
                                          app.trials.begin());
  const int k = app.bracket[t];
  return bracket_ref(app.name, app.spec.scheduler, app.bracket, k,
                     app.brackets[static_cast<std::size_t>(k)].phase());
}

}  // namespace sia
