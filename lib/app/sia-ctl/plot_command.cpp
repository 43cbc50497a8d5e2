// `sia-ctl plot` on a live cluster: the allocation timeline over the rounds the state
// directory keeps (controller.retention), per GPU type and per job, drawn from each round's
// saved cluster and placement (STATE/rounds/rNNNNNN-{cluster,placement}.json).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "app/sia-ctl/commands.hpp"
#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/placement.hpp"
#include "ctl/state_store.hpp"
#include "plot/chart.hpp"
#include "plot/page.hpp"

namespace sia::ctl {

namespace fs = std::filesystem;

int run_plot_command(const CtlArgs& args, const std::string& out) {
  const Settings config = config_of(args);
  StateStore store(config.controller.state_dir);
  store.check_exists();
  std::vector<std::string> types;
  std::set<std::string> job_names;
  struct Round {
    std::int64_t number;
    std::map<std::string, int> per_type, per_job;
  };
  std::vector<Round> rounds;
  std::string cluster_name;
  for (std::int64_t r : store.saved_rounds()) {
    const std::string cluster_file = store.round_file(r, "cluster");
    const std::string placement_file = store.round_file(r, "placement");
    std::error_code ec;
    if (!fs::exists(cluster_file, ec) || !fs::exists(placement_file, ec)) continue;  // cut short
    const Cluster cluster = cluster_from_document(read_document(cluster_file, {"Cluster"}));
    const Placement p =
        parse_placement(read_document(placement_file, {"Placement"}).data(), cluster);
    Round round{r, {}, {}};
    for (const auto& t : cluster.types) {
      if (std::find(types.begin(), types.end(), t.name) == types.end()) types.push_back(t.name);
      round.per_type[t.name] = 0;
    }
    for (const auto& jp : p.jobs) {
      round.per_type[cluster.types[jp.type].name] += jp.gpu_count();
      round.per_job[jp.job] += jp.gpu_count();
      job_names.insert(jp.job);
    }
    cluster_name = cluster.name;
    rounds.push_back(std::move(round));
  }
  plot::Axis x{"round"}, y{"GPUs held"};
  x.integer = y.integer = true;
  auto timeline = [&](const char* title) {
    plot::Chart c;
    c.title = title;
    c.x = x;
    c.y = y;
    c.mark = plot::Mark::stacked;
    c.width = 600;
    c.height = 340;
    return c;
  };
  plot::Chart by_type = timeline("GPUs held per GPU type"), by_job = timeline("GPUs held per job");
  for (std::size_t t = 0; t < types.size(); ++t) {
    plot::Series s{types[t], {}, t};
    for (const auto& r : rounds) {
      auto it = r.per_type.find(types[t]);
      s.points.emplace_back(r.number, it == r.per_type.end() ? 0 : it->second);
    }
    by_type.series.push_back(std::move(s));
  }
  for (const auto& job : job_names) {
    plot::Series s{job, {}, std::nullopt};
    for (const auto& r : rounds) {
      auto it = r.per_job.find(job);
      s.points.emplace_back(r.number, it == r.per_job.end() ? 0 : it->second);
    }
    by_job.series.push_back(std::move(s));
  }
  plot::Page page;
  page.title = "Cluster " + (cluster_name.empty() ? store.root() : cluster_name) + ": allocations";
  page.notes.push_back(
      rounds.empty()
          ? "State directory " + store.root() +
                ": no saved rounds (rounds with jobs keep their files; controller.retention "
                "says how many)."
          : "State directory " + store.root() + ": rounds " +
                std::to_string(rounds.front().number) + " to " +
                std::to_string(rounds.back().number) + " (" + std::to_string(rounds.size()) +
                " kept), the GPUs each placement gave.");
  page.sections.push_back(
      {"Allocation timeline", {}, {}, {plot::render_svg(by_type), plot::render_svg(by_job)}});
  plot::write_page(out, plot::render_html(page));
  return 0;
}

}  // namespace sia::ctl
