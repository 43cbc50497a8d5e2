#include "app/sia-ctl/plot.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "plot/chart.hpp"
#include "plot/page.hpp"
#include "plot/scale.hpp"

namespace sia::app {

using nlohmann::json;

namespace {

constexpr int kChartWidth = 600, kChartHeight = 340;
constexpr int kRestartBars = 15;  // bars of the restarts chart before "15+"

struct JobRow {
  std::string workload, policy;
  double jct = 0;
  int restarts = 0;
  std::optional<double> rho;
};

struct RoundRow {
  std::string workload, policy;
  double t = 0;
  int active = 0, queued = 0;
  std::vector<std::pair<std::string, double>> gpus;  // per GPU type
  std::optional<double> runtime;                     // seconds
};

std::string line_path(std::size_t i) {
  return "line " + std::to_string(i + 1);
}

// One value per line of the file (null for a blank line), so that errors name the line.
std::vector<json> read_json_lines(const std::string& file) {
  std::istringstream in(read_input(file));
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      out.emplace_back(nullptr);
      continue;
    }
    json v = parse_json_bounded(line);
    if (v.is_discarded() || !v.is_object()) {
      throw Error(ExitStatus::data,
                  display_name(file) + ": " + line_path(out.size()) +
                      ": expected a JSON object (one record per line, JSON Lines), got " +
                      (v.is_discarded() ? std::string("text that is not JSON") : "other JSON"));
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Calls fn(node) for each record of `type`; records of other types are skipped (as every
// reader of streams does), but a record must say its type.
template <class Fn>
int each_record(const RecordsInput& in, const std::string& type, Fn fn) {
  const std::string hint = std::string(" (is this the file sia-ctl simulate wrote with ") +
                           (type == "job" ? "--jobs" : "--events") + "?)";
  int n = 0;
  for (std::size_t i = 0; i < in.records.size(); ++i) {
    if (in.records[i].is_null()) continue;
    Node r(in.records[i], in.file, line_path(i));
    if (!r.has("type")) r.fail("expected a record with a \"type\" field" + hint);
    if (r.at("type").as_string() != type) continue;
    fn(r);
    ++n;
  }
  if (n == 0) throw Error(ExitStatus::data, in.file + ": no \"" + type + "\" records" + hint);
  return n;
}

std::vector<JobRow> job_rows(const RecordsInput& in) {
  std::vector<JobRow> rows;
  each_record(in, "job", [&](const Node& r) {
    JobRow j;
    j.policy = r.at("policy").as_string();
    j.workload = r.string_or("workload", "");
    j.jct = r.at("jct").non_negative_number();
    j.restarts = r.at("restarts").non_negative_int32();
    if (auto rho = r.get("rho")) j.rho = rho->non_negative_number();
    rows.push_back(std::move(j));
  });
  return rows;
}

std::vector<RoundRow> round_rows(const RecordsInput& in) {
  std::vector<RoundRow> rows;
  each_record(in, "round", [&](const Node& r) {
    RoundRow x;
    x.policy = r.at("policy").as_string();
    x.workload = r.string_or("workload", "");
    x.t = r.at("t").as_number();
    x.active = r.at("active").non_negative_int32();
    x.queued = r.has("queued") ? r.at("queued").non_negative_int32()
                               : std::max(0, x.active - r.at("running").non_negative_int32());
    if (auto g = r.get("gpus")) {
      for (const auto& k : g->keys()) x.gpus.emplace_back(k, g->at(k).non_negative_number());
    }
    if (auto p = r.get("policy_runtime")) x.runtime = p->non_negative_number();
    rows.push_back(std::move(x));
  });
  return rows;
}

void add_unique(std::vector<std::string>& list, const std::string& s) {
  if (std::find(list.begin(), list.end(), s) == list.end()) list.push_back(s);
}

std::size_t index_of(const std::vector<std::string>& list, const std::string& s) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), s) - list.begin());
}

std::string fixed(double v, int decimals) {
  return plot::format_number(v, decimals);
}

// The summary table and the title from the SimResult document.
void add_summary(const Node& data, plot::Page& page, std::vector<std::string>& policies) {
  std::vector<std::string> workloads;
  data.at("workloads").each([&](const Node& w) {
    workloads.push_back(w.at("workload").as_string());
  });
  std::string where =
      workloads.size() == 1 ? workloads[0] : std::to_string(workloads.size()) + " workloads";
  page.title = "Simulation of " + where + " on " + data.at("cluster").as_string();
  page.notes.push_back(data.at("profile").as_string() + " profile, " +
                       fixed(data.at("round").as_number(), 0) + " s rounds" +
                       (workloads.size() > 1 ? " (jobs of all workloads pooled)" : ""));
  plot::Table t{
      {"policy", "avg JCT (h)", "median JCT (h)", "p99 JCT (h)", "makespan (h)", "GPU h per job",
       "restarts per job", "unfair jobs (%)", "worst rho", "policy runtime median (ms)"},
      {}};
  data.at("policies").each([&](const Node& p) {
    const std::string name = p.at("policy").as_string();
    add_unique(policies, name);
    Node s = p.at("summary");
    auto h = [&](const char* k) { return fixed(s.at(k).as_number() / 3600, 2); };
    const double rho = s.at("worst_rho").as_number();  // 0: no rho measured (--no-fairness)
    t.rows.push_back({name, h("avg_jct"), h("median_jct"), h("p99_jct"), h("makespan"),
                      fixed(s.at("gpu_hours_per_job").as_number(), 2),
                      fixed(s.at("restarts_per_job").as_number(), 2),
                      rho ? fixed(100 * s.at("unfair_fraction").as_number(), 1) : "-",
                      rho ? fixed(rho, 2) : "-",
                      fixed(1e3 * s.at("policy_runtime_median").as_number(), 2)});
  });
  page.sections.push_back({"Summary", {}, {t}, {}});
}

plot::Chart chart(std::string title, plot::Axis x, plot::Axis y, plot::Mark mark) {
  plot::Chart c;
  c.title = std::move(title);
  c.x = std::move(x);
  c.y = std::move(y);
  c.mark = mark;
  c.width = kChartWidth;
  c.height = kChartHeight;
  return c;
}

// The empirical CDF of `v`: a step up of 1/n at each value, from 0 at the smallest.
std::vector<std::pair<double, double>> cdf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> pts;
  if (v.empty()) return pts;
  pts.emplace_back(v[0], 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    pts.emplace_back(v[i], static_cast<double>(i + 1) / v.size());
  }
  return pts;
}

void add_job_charts(const std::vector<JobRow>& jobs, const std::vector<std::string>& policies,
                    plot::Page& page) {
  plot::Axis frac{"fraction of jobs"};
  frac.min = 0.0;
  frac.max = 1.0;
  auto jct = chart("Job completion time (CDF)", {"JCT", "h", true}, frac, plot::Mark::step);
  auto rho = chart("Finish-time fairness rho (CDF)", {"rho = JCT / fair-share JCT", "", false},
                   frac, plot::Mark::step);
  plot::Axis count_axis{"jobs"};
  count_axis.integer = true;
  auto restarts =
      chart("Restarts per job", {"restarts of a job", "", false}, count_axis, plot::Mark::bars);
  // One bar per restart count up to kRestartBars, the last one for that many or more.
  int most = 0;
  for (const auto& row : jobs) most = std::max(most, row.restarts);
  const int last = std::min(most, kRestartBars);
  restarts.x.min = 0.0;
  restarts.x.max = static_cast<double>(last);
  for (int k = 0; k <= last; ++k) {
    restarts.categories.push_back(std::to_string(k) + (k == kRestartBars && most > k ? "+" : ""));
  }
  for (std::size_t p = 0; p < policies.size(); ++p) {
    std::vector<double> j, r;
    std::map<int, int> count;
    for (const auto& row : jobs) {
      if (row.policy != policies[p]) continue;
      j.push_back(row.jct / 3600);
      if (row.rho) r.push_back(*row.rho);
      ++count[std::min(row.restarts, last)];
    }
    jct.series.push_back({policies[p], cdf(j), p});
    rho.series.push_back({policies[p], cdf(r), p});
    plot::Series bars{policies[p], {}, p};
    for (const auto& [k, n] : count) bars.points.emplace_back(k, n);
    restarts.series.push_back(std::move(bars));
  }
  page.sections.push_back(
      {"Jobs",
       {"Per job, all workloads pooled: the fraction of jobs done within a JCT; finish-time "
        "fairness rho (Themis), above 1 when a job did worse than on its fair share; and how "
        "often jobs were restarted."},
       {},
       {plot::render_svg(jct), plot::render_svg(rho), plot::render_svg(restarts)}});
}

void add_round_charts(const std::vector<RoundRow>& rounds, const std::vector<std::string>& policies,
                      plot::Page& page) {
  std::vector<std::string> workloads, types;
  for (const auto& r : rounds) {
    add_unique(workloads, r.workload);
    for (const auto& g : r.gpus) add_unique(types, g.first);
  }
  const std::string shown = workloads.empty() ? "" : workloads.front();
  plot::Axis time{"simulated time", "h", false};
  for (const auto& r : rounds) {
    if (r.workload == shown) time.max = std::max(time.max.value_or(0.0), r.t / 3600);
  }
  auto counts = [](const char* label) {
    plot::Axis a{label};
    a.integer = true;
    return a;
  };
  auto queue = chart("Queue length", time, counts("jobs waiting for GPUs"), plot::Mark::line);
  auto contention =
      chart("Contention", time, counts("active jobs (running or waiting)"), plot::Mark::line);
  auto runtime =
      chart("Policy runtime per round", time, {"policy runtime", "ms", true}, plot::Mark::line);
  std::vector<std::string> held;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    plot::Series q{policies[p], {}, p}, c{policies[p], {}, p}, rt{policies[p], {}, p};
    std::vector<plot::Series> per_type;
    for (std::size_t t = 0; t < types.size(); ++t) per_type.push_back({types[t], {}, t});
    for (const auto& r : rounds) {
      if (r.policy != policies[p] || r.workload != shown) continue;
      const double h = r.t / 3600;
      q.points.emplace_back(h, r.queued);
      c.points.emplace_back(h, r.active);
      // A round without active jobs ran no policy: nothing to draw.
      if (r.runtime && r.active > 0) rt.points.emplace_back(h, *r.runtime * 1e3);
      for (const auto& [type, n] : r.gpus)
        per_type[index_of(types, type)].points.emplace_back(h, n);
    }
    queue.series.push_back(std::move(q));
    contention.series.push_back(std::move(c));
    runtime.series.push_back(std::move(rt));
    auto g = chart("GPUs held per GPU type, " + policies[p], time, counts("GPUs held"),
                   plot::Mark::stacked);
    g.series = std::move(per_type);
    held.push_back(plot::render_svg(g));
  }
  std::vector<std::string> notes{
      "Per round: GPUs held at the end of the round, stacked by GPU type; jobs waiting "
      "for GPUs; all active jobs; the wall-clock time the policy took to decide (not "
      "drawn for rounds without active jobs, nor when the run had --no-timing)."};
  if (workloads.size() > 1) {
    notes.push_back("Showing workload " + shown + " (the first of " +
                    std::to_string(workloads.size()) + ").");
  }
  held.push_back(plot::render_svg(queue));
  held.push_back(plot::render_svg(contention));
  held.push_back(plot::render_svg(runtime));
  page.sections.push_back({"Cluster over time", notes, {}, held});
}

// A Series document: {"kind": "Series", "version": 1, "title", "x", "y", "series"}.
plot::Page series_page(const json& doc, const std::string& file) {
  Node root(doc, file, "");
  const auto version = root.at("version").as_int();
  if (version != 1) {
    root.at("version").fail("expected 1 (the Series version this program reads), got " +
                            std::to_string(version));
  }
  auto axis = [](const Node& n) {
    plot::Axis a;
    a.label = n.at("label").as_string();
    a.unit = n.string_or("unit", "");
    a.log = n.get("scale") && n.at("scale").one_of({"linear", "log"}) == "log";
    return a;
  };
  plot::Chart c =
      chart(root.string_or("title", ""), axis(root.at("x")), axis(root.at("y")), plot::Mark::line);
  c.markers = true;
  root.at("series").each([&](const Node& s) {
    plot::Series out;
    out.name = s.at("name").as_string();
    s.at("points").each([&](const Node& pt) {
      if (pt.size() != 2) pt.expected("a point [x, y]");
      out.points.emplace_back(pt[0].as_number(), pt[1].as_number());
    });
    c.series.push_back(std::move(out));
  });
  plot::Page page;
  page.title = c.title.empty() ? "Series" : c.title;
  page.notes.push_back("From " + file + ".");
  page.sections.push_back({"", {}, {}, {plot::render_svg(c)}});
  return page;
}

plot::Page simulation_page(const ResultInput& result, const RecordsInput* jobs,
                           const RecordsInput* rounds) {
  plot::Page page;
  page.title = "Simulation report";
  std::vector<std::string> policies;
  if (result.doc) {
    add_summary(Node((*result.doc)["data"], result.file, "data"), page, policies);
  }
  std::vector<JobRow> job_list;
  std::vector<RoundRow> round_list;
  if (jobs) job_list = job_rows(*jobs);
  if (rounds) round_list = round_rows(*rounds);
  for (const auto& j : job_list) add_unique(policies, j.policy);
  for (const auto& r : round_list) add_unique(policies, r.policy);
  if (jobs) add_job_charts(job_list, policies, page);
  if (rounds) add_round_charts(round_list, policies, page);
  if (!jobs || !rounds) {
    page.notes.push_back(std::string("Not drawn: ") +
                         (!jobs ? "the per-job charts (give --jobs FILE)" : "") +
                         (!jobs && !rounds ? "; " : "") +
                         (!rounds ? "the charts over time (give --events FILE)" : "") + ".");
  }
  return page;
}

}  // namespace

void write_simulation_report(const std::string& out, const ResultInput& result,
                             const RecordsInput& jobs, const RecordsInput& rounds) {
  plot::write_page(out, plot::render_html(simulation_page(result, &jobs, &rounds)));
}

int run_plot(const PlotArgs& a) {
  if (a.input.empty() && a.jobs.empty() && a.events.empty()) {
    throw Error(ExitStatus::usage,
                "nothing to plot: give a SimResult or Series document, --jobs or --events");
  }
  std::optional<Document> doc;
  if (!a.input.empty()) {
    const std::string text = read_input(a.input);
    const json probe = parse_json_bounded(text);
    if (probe.is_object() && probe.value("kind", "") == "Series" && !probe.contains("apiVersion")) {
      if (!a.jobs.empty() || !a.events.empty()) {
        throw Error(ExitStatus::usage, "--jobs and --events go with a SimResult, not a Series");
      }
      plot::write_page(a.out, plot::render_html(series_page(probe, display_name(a.input))));
      return 0;
    }
    doc = parse_documents(text, display_name(a.input), {"SimResult"}).front();
  }
  std::vector<json> job_lines, round_lines;
  if (!a.jobs.empty()) job_lines = read_json_lines(a.jobs);
  if (!a.events.empty()) round_lines = read_json_lines(a.events);
  RecordsInput jobs{job_lines, display_name(a.jobs)}, rounds{round_lines, display_name(a.events)};
  ResultInput result{doc ? doc->root.get() : nullptr, doc ? doc->file : ""};
  const plot::Page page = simulation_page(result, a.jobs.empty() ? nullptr : &jobs,
                                          a.events.empty() ? nullptr : &rounds);
  plot::write_page(a.out, plot::render_html(page));
  return 0;
}

}  // namespace sia::app
