#include "app/sia-ctl/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/sia-ctl/plot.hpp"
#include "cli/table.hpp"
#include "core/compat.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "os/atomic_file.hpp"
#include "sim/searches.hpp"
#include "sim/workload.hpp"
#include "sim/workload_transform.hpp"

namespace sia::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::vector<std::string> workload_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    auto ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".csv" || ext == ".jsonl" || ext == ".json")) {
      files.push_back(e.path().string());
    }
  }
  // Natural order: workload-2 before workload-10.
  auto key = [](const std::string& f) {
    std::string stem = fs::path(f).stem().string();
    std::size_t i = stem.find_last_not_of("0123456789");
    std::string head = stem.substr(0, i + 1);
    long long num = i + 1 < stem.size() ? std::atoll(stem.c_str() + i + 1) : -1;
    return std::make_pair(head, num);
  };
  std::sort(files.begin(), files.end(),
            [&](const std::string& a, const std::string& b) { return key(a) < key(b); });
  if (files.empty()) {
    throw Error(ExitStatus::no_input, path + ": no workload files (.csv, .jsonl, .json)");
  }
  return files;
}

json summary_json(const SimSummary& s) {
  json out{{"jobs", s.jobs},
           {"avg_jct", s.avg_jct},
           {"median_jct", s.median_jct},
           {"p99_jct", s.p99_jct},
           {"makespan", s.makespan},
           {"gpu_hours_per_job", s.gpu_hours_per_job},
           {"restarts_per_job", s.restarts_per_job},
           {"contention_mean", s.contention_mean},
           {"contention_max", s.contention_max},
           {"queue_mean", s.queue_mean},
           {"queue_max", s.queue_max},
           {"unfair_fraction", s.unfair_fraction},
           {"worst_rho", s.worst_rho},
           {"policy_runtime_median", s.policy_runtime_median},
           {"policy_runtime_p95", s.policy_runtime_p95},
           {"round_runtime_median", s.round_runtime_median},
           {"round_runtime_p95", s.round_runtime_p95},
           {"rounds", s.rounds}};
  if (s.apps > 0) {
    out["apps"] = s.apps;
    out["avg_act"] = s.avg_act;
    out["unfair_app_fraction"] = s.unfair_app_fraction;
    out["worst_app_rho"] = s.worst_app_rho;
  }
  return out;
}

json app_json(const AppResult& a, const SimResult& r) {
  json out{{"type", "app"},
           {"workload", r.workload},
           {"policy", r.policy},
           {"name", a.name},
           {"trials", a.trials},
           {"stopped", a.stopped},
           {"submission", a.submission},
           {"completion", a.completion},
           {"act", a.act},
           {"contention", a.contention}};
  out["best_metric"] = a.best_metric ? json(*a.best_metric) : json(nullptr);
  out["isolated_act"] = a.isolated_act ? json(*a.isolated_act) : json(nullptr);
  out["rho"] = a.rho ? json(*a.rho) : json(nullptr);
  return out;
}

json job_json(const JobResult& j, const SimResult& r) {
  json gpu = json::object();
  for (std::size_t t = 0; t < r.gpu_types.size(); ++t) gpu[r.gpu_types[t]] = j.gpu_seconds[t];
  json out{{"type", "job"},
           {"workload", r.workload},
           {"policy", r.policy},
           {"name", j.name},
           {"model", j.model},
           {"submission", j.submission},
           {"completion", j.completion},
           {"jct", j.jct},
           {"restarts", j.restarts},
           {"queued", j.queued},
           {"gpu_seconds", gpu},
           {"contention", j.contention}};
  out["isolated_jct"] = j.isolated_jct ? json(*j.isolated_jct) : json(nullptr);
  out["rho"] = j.rho ? json(*j.rho) : json(nullptr);
  if (!j.app.empty()) {
    out["app"] = j.app;
    out["status"] = j.stopped ? "stopped" : "completed";
    if (j.stopped) out["stop_reason"] = j.stop_reason;
  }
  return out;
}

json round_json(const RoundRecord& rec, const SimResult& r) {
  json jobs = json::array();
  for (const auto& j : rec.jobs) {
    jobs.push_back(json::array({j.name, j.type >= 0 ? json(r.gpu_types[j.type]) : json(nullptr),
                                j.placement, j.batch_size, j.accum_steps, j.epoch, j.progress,
                                j.restarts, j.completion ? json(*j.completion) : json(nullptr)}));
  }
  json gpus = json::object();
  for (std::size_t t = 0; t < r.gpu_types.size(); ++t) {
    gpus[r.gpu_types[t]] = t < rec.gpus.size() ? rec.gpus[t] : 0;
  }
  return json{{"type", "round"},
              {"workload", r.workload},
              {"policy", r.policy},
              {"t", rec.t},
              {"active", rec.active},
              {"running", rec.running},
              {"queued", rec.active - rec.running},
              {"gpus", gpus},
              {"policy_runtime", rec.policy_runtime},
              {"jobs", jobs}};
}

// Pools several workloads' results the way the paper reports them: jobs pooled for JCT
// percentiles and GPU hours, makespan, contention and queue averaged over workloads.
SimSummary pooled(const std::vector<SimResult>& rs, bool reference) {
  if (rs.size() == 1) return rs.front().summary;
  SimResult all;
  all.round = rs.front().round;
  double makespan = 0, cmean = 0, qmean = 0, cmax = 0, qmax = 0;
  for (const auto& r : rs) {
    all.jobs.insert(all.jobs.end(), r.jobs.begin(), r.jobs.end());
    all.apps.insert(all.apps.end(), r.apps.begin(), r.apps.end());
    all.policy_runtimes.insert(all.policy_runtimes.end(), r.policy_runtimes.begin(),
                               r.policy_runtimes.end());
    all.round_runtimes.insert(all.round_runtimes.end(), r.round_runtimes.begin(),
                              r.round_runtimes.end());
    makespan += r.summary.makespan;
    cmean += r.summary.contention_mean;
    qmean += r.summary.queue_mean;
    cmax = std::max(cmax, r.summary.contention_max);
    qmax = std::max(qmax, r.summary.queue_max);
  }
  SimSummary s = summarize(all, reference);
  s.makespan = makespan / rs.size();
  s.contention_mean = cmean / rs.size();
  s.queue_mean = qmean / rs.size();
  s.contention_max = cmax;
  s.queue_max = qmax;
  s.rounds = 0;
  for (const auto& r : rs) s.rounds += r.summary.rounds;
  return s;
}

std::string hours(double s) {
  return cli::fixed(s / 3600.0, 2) + " h";
}
std::string ms(double s) {
  return cli::fixed(s * 1e3, 2) + " ms";
}

std::string summary_table(const std::string& title, const SimSummary& s) {
  cli::Table t({"metric", "value"});
  t.right_align(1);
  t.add({"jobs", std::to_string(s.jobs)});
  t.add({"average JCT", hours(s.avg_jct)});
  t.add({"median JCT", hours(s.median_jct)});
  t.add({"p99 JCT", hours(s.p99_jct)});
  t.add({"makespan", hours(s.makespan)});
  t.add({"GPU hours per job", cli::fixed(s.gpu_hours_per_job, 2)});
  t.add({"restarts per job", cli::fixed(s.restarts_per_job, 2)});
  t.add({"contention mean (max)",
         cli::fixed(s.contention_mean, 1) + " (" + cli::fixed(s.contention_max, 0) + ")"});
  t.add(
      {"queue mean (max)", cli::fixed(s.queue_mean, 1) + " (" + cli::fixed(s.queue_max, 0) + ")"});
  t.add(
      {"unfair jobs (rho > 1)", s.rho_jobs ? cli::fixed(100 * s.unfair_fraction, 1) + " %" : "-"});
  t.add({"worst rho", s.rho_jobs ? cli::fixed(s.worst_rho, 2) : "-"});
  if (s.apps > 0) {
    t.add({"apps", std::to_string(s.apps)});
    t.add({"average app completion time", hours(s.avg_act)});
    t.add({"unfair apps (rho > 1)",
           s.app_rho_count ? cli::fixed(100 * s.unfair_app_fraction, 1) + " %" : "-"});
    t.add({"worst app rho", s.app_rho_count ? cli::fixed(s.worst_app_rho, 2) : "-"});
  }
  t.add({"policy runtime median (p95)",
         ms(s.policy_runtime_median) + " (" + ms(s.policy_runtime_p95) + ")"});
  return title + "\n" + t.render();
}

// One row per policy, with average JCT, p99 and GPU hours relative to the first.
std::string comparison_table(const std::string& title, const std::vector<std::string>& policies,
                             const std::vector<SimSummary>& s) {
  cli::Table t({"policy", "avg JCT", "vs first", "p99 JCT", "makespan", "GPU h/job", "restarts/job",
                "unfair", "worst rho", "runtime med", "runtime p95"});
  for (int c = 1; c <= 10; ++c) t.right_align(c);
  for (std::size_t i = 0; i < policies.size(); ++i) {
    double ratio = s[0].avg_jct > 0 ? s[i].avg_jct / s[0].avg_jct : 0;
    t.add({policies[i], hours(s[i].avg_jct), cli::fixed(ratio, 2) + "x", hours(s[i].p99_jct),
           hours(s[i].makespan), cli::fixed(s[i].gpu_hours_per_job, 2),
           cli::fixed(s[i].restarts_per_job, 2),
           s[i].rho_jobs ? cli::fixed(100 * s[i].unfair_fraction, 1) + " %" : "-",
           s[i].rho_jobs ? cli::fixed(s[i].worst_rho, 2) : "-", ms(s[i].policy_runtime_median),
           ms(s[i].policy_runtime_p95)});
  }
  std::string out = title + "\n" + t.render();
  if (s[0].apps > 0) {
    cli::Table a({"policy", "apps", "avg app completion", "unfair apps", "worst app rho"});
    for (int c = 1; c <= 4; ++c) a.right_align(c);
    for (std::size_t i = 0; i < policies.size(); ++i) {
      a.add({policies[i], std::to_string(s[i].apps), hours(s[i].avg_act),
             s[i].app_rho_count ? cli::fixed(100 * s[i].unfair_app_fraction, 1) + " %" : "-",
             s[i].app_rho_count ? cli::fixed(s[i].worst_app_rho, 2) : "-"});
    }
    out += "\napps\n" + a.render();
  }
  return out;
}

}  // namespace

// A round of a day is longer than any job's restart; beyond it time sums lose precision.
constexpr double kMaxRound = 86400;  // as sia-solve --round
// Progress shows once a run has lasted this long, then at most once a second.
constexpr double kProgressAfter = 3;

int run_simulate(const SimulateArgs& a) {
  const bool reference = parse_compat(a.compat) == Compat::reference;
  const std::string data = default_data_dir();
  // Not $SIA_CLUSTER (the live cluster's, sia-config(5)): the default workload is the bundled
  // cluster's, and a simulation does not change with the environment it runs in.
  const std::string cluster_file =
      a.cluster.empty() ? (fs::path(data) / "clusters" / "sia-hetero-64.toml").string() : a.cluster;
  const std::string workload_path =
      a.workload.empty() ? (fs::path(data) / "workloads" / "philly" / "workload-1.csv").string()
                         : a.workload;
  // Seconds above 0 and at most `max` ("86400", "1e+09" as %g writes them).
  auto check_seconds = [](const char* flag, const std::optional<double>& v, double max) {
    if (!v || (*v > 0 && *v <= max)) return;
    char msg[128];
    std::snprintf(msg, sizeof msg, "%s: expected seconds above 0 and at most %g, got %g", flag, max,
                  *v);
    throw Error(ExitStatus::usage, msg);
  };
  check_seconds("--round", a.round, kMaxRound);
  check_seconds("--horizon", a.horizon, kMaxSeconds);
  if (a.report_out == "-") {
    throw Error(ExitStatus::usage, "--report: expected a file name (stdout holds the result)");
  }
  const std::vector<std::string> policies = split_list(a.options.policy);
  if (policies.empty()) throw Error(ExitStatus::usage, "--policy: expected a policy name");
  const Profiling profiling = parse_profiling(a.profiling);
  const ProfileStore profile_store = parse_profile_store(a.profile_store);
  const Cluster cluster = scale_cluster(read_cluster(cluster_file), a.scale);
  Catalog catalog(a.catalog.empty() ? default_catalog_dir() : a.catalog);
  // Check every policy and its knobs before any simulation starts.
  for (const auto& p : policies) {
    PolicyOptions po = a.options.policy_options;
    po.quirks = policy_quirks(reference ? Compat::reference : Compat::standard);
    make_policy(p, po);
  }
  const auto files = workload_files(workload_path);
  std::vector<std::vector<JobSpec>> workloads;
  std::vector<std::vector<AppSpec>> workload_apps(files.size());
  for (std::size_t w = 0; w < files.size(); ++w) {
    const std::string& f = files[w];
    std::vector<JobSpec> jobs = read_workload(f, catalog, &workload_apps[w]);
    if (a.scale > 1 && !workload_apps[w].empty()) {
      throw Error(ExitStatus::usage, display_name(f) +
                                         ": --scale copies jobs, not apps: a "
                                         "workload with App documents runs at "
                                         "--scale 1");
    }
    jobs = scale_workload(std::move(jobs), a.scale);
    if (static_cast<long>(jobs.size()) > a.max_jobs) {
      throw Error(ExitStatus::data, display_name(f) + ": " + std::to_string(jobs.size()) +
                                        " jobs, more than the limit of " +
                                        std::to_string(a.max_jobs) + " (--max-jobs raises it)");
    }
    assign_categories(jobs, a.rigid_share, a.strong_share, a.category_seed);
    if (a.searches) {
      // After the categories: a search's trials take its first job's settings, category too.
      SearchOptions so;
      so.share = *a.searches;
      so.seed = a.search_seed;
      if (a.search_scheduler == "hyperband") so.scheduler.kind = AppSchedulerKind::hyperband;
      for (auto& app : add_searches(jobs, so)) workload_apps[w].push_back(app);
    }
    workloads.push_back(std::move(jobs));
  }
  for (const auto& n : catalog.names()) catalog.get(n);  // load before threads share it

  // One task per (policy, workload), run on the machine's cores.
  struct Task {
    std::size_t policy, workload;
  };
  std::vector<Task> tasks;
  for (std::size_t p = 0; p < policies.size(); ++p) {
    for (std::size_t w = 0; w < files.size(); ++w) tasks.push_back({p, w});
  }
  std::vector<std::vector<SimResult>> results(policies.size(),
                                              std::vector<SimResult>(files.size()));
  std::vector<std::exception_ptr> errors(tasks.size());
  const bool tty = cli::stderr_is_tty() && cli::verbosity() >= 0;
  const auto started = std::chrono::steady_clock::now();
  bool progress_shown = false;  // a progress line waits for its newline
  std::mutex mu;
  std::size_t next = 0;
  int finished = 0;
  auto options_for = [&](const Task& t) {
    SimOptions o = a.options;
    o.policy = policies[t.policy];
    o.reference = reference;
    o.profiling = profiling;
    o.profile_store = profile_store;
    o.horizon = a.horizon ? *a.horizon : 0;
    o.record_rounds = !a.events_out.empty();
    o.apps = workload_apps[t.workload];
    o.round = a.round ? *a.round : a.options.round > 0 ? a.options.round : default_round(o.policy);
    if (!a.options.save_rounds_dir.empty()) {
      fs::path d = a.options.save_rounds_dir;
      if (policies.size() > 1) d /= o.policy;
      if (files.size() > 1) d /= fs::path(files[t.workload]).stem();
      o.save_rounds_dir = d.string();
    }
    // One simulation: after kProgressAfter seconds, a line a second at most -- rewritten in
    // place on a terminal, one after the other with -v.
    if ((tty || cli::verbosity() >= 1) && tasks.size() == 1) {
      o.progress = [&, rounds = 0L, last = 0.0](double now, int done, int total) mutable {
        ++rounds;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (wall < kProgressAfter || wall - last < 1) return;
        last = wall;
        const std::string line = "simulated " + cli::duration(now) + ": " + std::to_string(done) +
                                 "/" + std::to_string(total) + " jobs done, " +
                                 std::to_string(rounds) + " rounds, " + cli::duration(wall) +
                                 " wall";
        cli::write_stderr(tty ? "\r" + line + "   " : line + "\n");
        progress_shown = tty;
      };
    }
    return o;
  };
  auto worker = [&] {
    for (;;) {
      std::size_t k;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= tasks.size()) return;
        k = next++;
      }
      const Task& t = tasks[k];
      try {
        SimResult r = simulate(cluster, catalog, workloads[t.workload], options_for(t));
        r.workload = display_name(files[t.workload]);
        results[t.policy][t.workload] = std::move(r);
      } catch (...) {
        errors[k] = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (tty && tasks.size() > 1) {
        cli::write_stderr("\r" + std::to_string(finished) + "/" + std::to_string(tasks.size()) +
                          " simulations done   ");
      }
      cli::debug("sia-ctl",
                 policies[t.policy] + " on " + display_name(files[t.workload]) + " done");
    }
  };
  const unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(tasks.size())));
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (progress_shown || (tty && tasks.size() > 1)) cli::write_stderr("\n");
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    if (!errors[k]) continue;
    const std::string where =
        policies[tasks[k].policy] + " on " + display_name(files[tasks[k].workload]) + ": ";
    try {
      std::rethrow_exception(errors[k]);
    } catch (const Error& e) {
      throw Error(e.status(), where + e.what());
    }
  }
  if (a.no_timing) {
    for (auto& per : results) {
      for (auto& r : per) {
        r.policy_runtimes.clear();
        r.round_runtimes.clear();
        r.summary.policy_runtime_median = r.summary.policy_runtime_p95 = 0;
        for (auto& rec : r.rounds) rec.policy_runtime = 0;
        r.summary.round_runtime_median = r.summary.round_runtime_p95 = 0;
      }
    }
  }
  std::vector<SimSummary> totals;
  for (const auto& per : results) totals.push_back(pooled(per, reference));

  std::vector<json> job_records, round_records;
  for (const auto& per : results) {
    for (const auto& r : per) {
      for (const auto& j : r.jobs) job_records.push_back(job_json(j, r));
      for (const auto& ap : r.apps) {
        if (ap.trials > 1 || ap.stopped) job_records.push_back(app_json(ap, r));
      }
      for (const auto& rec : r.rounds) round_records.push_back(round_json(rec, r));
    }
  }
  if (!a.jobs_out.empty() || a.format == cli::Format::jsonl) {
    std::string text;
    for (const auto& j : job_records) text += dump_json(j, false) + "\n";
    if (!a.jobs_out.empty()) os::write_file_atomic(a.jobs_out, text, os::kPublicFile);
    if (a.format == cli::Format::jsonl) cli::write_stdout(text);
  }
  if (!a.events_out.empty()) {
    std::string text;
    for (const auto& rec : round_records) text += dump_json(rec, false) + "\n";
    os::write_file_atomic(a.events_out, text, os::kPublicFile);
  }
  json per_policy = json::array();
  for (std::size_t p = 0; p < policies.size(); ++p) {
    json per = json::array();
    for (const auto& r : results[p]) {
      per.push_back({{"workload", r.workload}, {"summary", summary_json(r.summary)}});
    }
    per_policy.push_back(
        {{"policy", policies[p]},
         {"round", results[p].front().round},
         {"summary", summary_json(totals[p])},
         {"avg_jct_ratio", totals[0].avg_jct > 0 ? totals[p].avg_jct / totals[0].avg_jct : 0.0},
         {"workloads", per}});
  }
  const json result{{"cluster", cluster.name},
                    {"policy", a.options.policy},
                    {"profile", compat_name(reference ? Compat::reference : Compat::standard)},
                    {"round", results[0].front().round},
                    {"workloads", per_policy[0]["workloads"]},
                    {"summary", summary_json(totals[0])},
                    {"policies", per_policy}};
  const json metadata{{"generator", "sia-ctl simulate"}};
  if (!a.report_out.empty()) {
    const json doc{{"apiVersion", kApiVersion},
                   {"kind", "SimResult"},
                   {"metadata", metadata},
                   {"data", result}};
    write_simulation_report(a.report_out, {&doc, "sia-ctl simulate"},
                            {job_records, "sia-ctl simulate"}, {round_records, "sia-ctl simulate"});
  }
  if (a.format == cli::Format::json) {
    cli::print_document("SimResult", metadata, result);
  } else if (a.format == cli::Format::table) {
    const std::string where =
        cluster.name + " (" + std::to_string(cluster.total_gpus()) + " GPUs), " +
        (files.size() == 1
             ? display_name(files[0])
             : workload_path + " (" + std::to_string(files.size()) + " workloads, jobs pooled)") +
        (reference ? ", reference profile" : "");
    if (policies.size() == 1) {
      cli::write_stdout(summary_table(policies[0] + " on " + where + ", " +
                                          cli::fixed(results[0].front().round, 0) + " s rounds",
                                      totals[0]));
    } else {
      cli::write_stdout(comparison_table(where, policies, totals));
    }
  }
  return 0;
}

}  // namespace sia::app
