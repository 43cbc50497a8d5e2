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
#include "sim/deadline_transform.hpp"
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
  if (s.deadlines) {
    out["deadlines"] = json{{"guaranteed", s.guaranteed},
                            {"admitted", s.admitted},
                            {"admitted_fraction", s.admitted_fraction},
                            {"guaranteed_met_fraction", s.guaranteed_met_fraction},
                            {"best_effort_jobs", s.best_effort_jobs},
                            {"best_effort_with_deadline", s.best_effort_with_deadline},
                            {"best_effort_met_fraction", s.best_effort_met_fraction},
                            {"best_effort_avg_jct", s.best_effort_avg_jct},
                            {"best_effort_mean_rho", s.best_effort_mean_rho},
                            {"best_effort_worst_rho", s.best_effort_worst_rho},
                            {"gpu_hours", s.gpu_hours}};
  }
  if (s.reservations) {
    out["reservations"] = json{{"lent_gpu_hours", s.lent_gpu_hours},
                               {"take_backs", s.take_backs},
                               {"taken_back_gpus", s.taken_back_gpus}};
  }
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
  if (j.job_class) {
    out["class"] = to_string(*j.job_class);
    out["deadline"] = j.deadline ? json(*j.deadline) : json(nullptr);
    out["admitted"] = j.admitted;
    out["deadline_met"] = j.deadline_met;
    if (j.admitted) {
      out["plan"] = {{"gpu_type", j.plan_type}, {"gpus", j.plan_gpus}, {"finish", j.plan_finish}};
    }
  }
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
  json out{{"type", "round"},
           {"workload", r.workload},
           {"policy", r.policy},
           {"t", rec.t},
           {"active", rec.active},
           {"running", rec.running},
           {"queued", rec.active - rec.running},
           {"gpus", gpus},
           {"policy_runtime", rec.policy_runtime},
           {"jobs", jobs}};
  if (r.reservations) {
    out["lent_gpus"] = rec.lent_gpus;
    out["take_backs"] = rec.take_backs;
    out["taken_back_gpus"] = rec.taken_back_gpus;
  }
  return out;
}

// Pools several workloads' results the way the paper reports them: jobs pooled for JCT
// percentiles and GPU hours, makespan, contention and queue averaged over workloads.
SimSummary pooled(const std::vector<SimResult>& rs, Compat compat) {
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
  SimSummary s = summarize(all, sim_quirks(compat));
  s.makespan = makespan / rs.size();
  s.contention_mean = cmean / rs.size();
  s.queue_mean = qmean / rs.size();
  s.contention_max = cmax;
  s.queue_max = qmax;
  s.rounds = 0;
  for (const auto& r : rs) s.rounds += r.summary.rounds;
  s.reservations = rs.front().reservations;
  for (const auto& r : rs) {
    s.lent_gpu_hours += r.summary.lent_gpu_hours;
    s.take_backs += r.summary.take_backs;
    s.taken_back_gpus += r.summary.taken_back_gpus;
  }
  return s;
}

std::string hours(double s) {
  return cli::fixed(s / 3600.0, 2) + " h";
}
std::string ms(double s) {
  return cli::fixed(s * 1e3, 2) + " ms";
}

std::string percent(double f) {
  return cli::fixed(100 * f, 1) + " %";
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
  if (s.deadlines) {
    t.add({"guaranteed jobs admitted", std::to_string(s.admitted) + " of " +
                                           std::to_string(s.guaranteed) + " (" +
                                           percent(s.admitted_fraction) + ")"});
    t.add({"admitted that met their deadline", percent(s.guaranteed_met_fraction)});
    t.add({"best-effort with a deadline that met it",
           s.best_effort_with_deadline ? percent(s.best_effort_met_fraction) : "-"});
    t.add({"best-effort average JCT", hours(s.best_effort_avg_jct)});
    t.add({"best-effort mean (worst) rho", cli::fixed(s.best_effort_mean_rho, 2) + " (" +
                                               cli::fixed(s.best_effort_worst_rho, 2) + ")"});
    t.add({"GPU hours", cli::fixed(s.gpu_hours, 1)});
  }
  if (s.reservations) {
    t.add({"GPU hours lent by reservations", cli::fixed(s.lent_gpu_hours, 1)});
    t.add({"take-backs (GPUs in use)",
           std::to_string(s.take_backs) + " (" + std::to_string(s.taken_back_gpus) + ")"});
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
  if (s[0].deadlines) {
    cli::Table d({"policy", "admitted", "met (admitted)", "met (best-effort)", "BE avg JCT",
                  "BE mean rho", "GPU hours"});
    for (int c = 1; c <= 6; ++c) d.right_align(c);
    for (std::size_t i = 0; i < policies.size(); ++i) {
      d.add({policies[i], percent(s[i].admitted_fraction), percent(s[i].guaranteed_met_fraction),
             s[i].best_effort_with_deadline ? percent(s[i].best_effort_met_fraction) : "-",
             hours(s[i].best_effort_avg_jct), cli::fixed(s[i].best_effort_mean_rho, 2),
             cli::fixed(s[i].gpu_hours, 1)});
    }
    out += "\ndeadlines\n" + d.render();
  }
  if (s[0].reservations) {
    cli::Table v({"policy", "GPU hours lent", "take-backs", "GPUs taken back"});
    for (int c = 1; c <= 3; ++c) v.right_align(c);
    for (std::size_t i = 0; i < policies.size(); ++i) {
      v.add({policies[i], cli::fixed(s[i].lent_gpu_hours, 1), std::to_string(s[i].take_backs),
             std::to_string(s[i].taken_back_gpus)});
    }
    out += "\nreservations\n" + v.render();
  }
  return out;
}

}  // namespace

// A round of a day is longer than any job's restart; beyond it time sums lose precision.
constexpr double kMaxRound = 86400;  // as sia-solve --round
// Progress shows once a run has lasted this long, then at most once a second.
constexpr double kProgressAfter = 3;

namespace {

// What a run simulates, read and checked before any simulation starts.
struct Plan {
  Compat compat = Compat::standard;
  std::string workload_path;
  std::vector<std::string> policies;
  Profiling profiling = Profiling::bootstrap;
  ProfileStore profile_store = kDefaultProfileStore;
  std::vector<std::string> files;
  std::vector<std::vector<JobSpec>> workloads;
  std::vector<std::vector<AppSpec>> apps;                // per workload
  std::optional<std::vector<Reservation>> reservations;  // --reservations
};

// The flags' checks that need no file.
void check_flags(const SimulateArgs& a) {
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
  if (!a.deadlines.empty()) parse_deadline_draw(a.deadlines);
  if (a.report_out == "-") {
    throw Error(ExitStatus::usage, "--report: expected a file name (stdout holds the result)");
  }
}

// One workload file's jobs (and its apps, to which --searches adds), transformed as the
// flags say.
std::vector<JobSpec> read_one_workload(const SimulateArgs& a, const std::string& f,
                                       const Cluster& cluster, const Catalog& catalog,
                                       std::vector<AppSpec>& apps) {
  std::vector<JobSpec> jobs = read_workload(f, catalog, &apps);
  if (a.scale > 1 && !apps.empty()) {
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
  if (!a.deadlines.empty()) {
    assign_deadlines(jobs, parse_deadline_draw(a.deadlines), cluster, catalog);
  }
  if (a.searches) {
    // After the categories: a search's trials take its first job's settings, category too.
    SearchOptions so;
    so.share = *a.searches;
    so.seed = a.search_seed;
    if (a.search_scheduler == "hyperband") so.scheduler.kind = AppSchedulerKind::hyperband;
    for (auto& app : add_searches(jobs, so)) apps.push_back(app);
  }
  return jobs;
}

// What the flags say, checked; no file is read.
Plan make_plan(const SimulateArgs& a) {
  Plan plan;
  plan.compat = parse_compat(a.compat);
  plan.workload_path =
      a.workload.empty()
          ? (fs::path(default_data_dir()) / "workloads" / "philly" / "workload-1.csv").string()
          : a.workload;
  plan.policies = split_list(a.options.policy);
  if (plan.policies.empty()) throw Error(ExitStatus::usage, "--policy: expected a policy name");
  plan.profiling = parse_profiling(a.profiling);
  plan.profile_store = parse_profile_store(a.profile_store);
  return plan;
}

// Checks every policy and its knobs, then reads the workloads into `plan`.
void read_workloads(const SimulateArgs& a, const Cluster& cluster, const Catalog& catalog,
                    Plan& plan) {
  for (const auto& p : plan.policies) {
    PolicyOptions po = a.options.policy_options;
    po.quirks = policy_quirks(plan.compat);
    make_policy(p, po);
  }
  plan.files = workload_files(plan.workload_path);
  plan.apps.resize(plan.files.size());
  for (std::size_t w = 0; w < plan.files.size(); ++w) {
    plan.workloads.push_back(read_one_workload(a, plan.files[w], cluster, catalog, plan.apps[w]));
  }
}

// The simulations, one task per (policy, workload), run on the machine's cores, with their
// progress on stderr.
class Runner {
 public:
  Runner(const SimulateArgs& a, const Plan& plan, const Cluster& cluster, const Catalog& catalog)
      : a_(a), plan_(plan), cluster_(cluster), catalog_(catalog) {
    for (std::size_t p = 0; p < plan.policies.size(); ++p) {
      for (std::size_t w = 0; w < plan.files.size(); ++w) tasks_.push_back({p, w});
    }
    results_.assign(plan.policies.size(), std::vector<SimResult>(plan.files.size()));
    errors_.resize(tasks_.size());
  }

  // results[policy][workload]; the first failure is thrown, naming its task.
  std::vector<std::vector<SimResult>> run() {
    const unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                             static_cast<unsigned>(tasks_.size())));
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back([this] { work(); });
    work();
    for (auto& t : pool) t.join();
    if (progress_shown_ || (tty_ && tasks_.size() > 1)) cli::write_stderr("\n");
    for (std::size_t k = 0; k < tasks_.size(); ++k) {
      if (!errors_[k]) continue;
      try {
        std::rethrow_exception(errors_[k]);
      } catch (const Error& e) {
        throw Error(e.status(), name(tasks_[k]) + ": " + e.what());
      }
    }
    return std::move(results_);
  }

 private:
  struct Task {
    std::size_t policy, workload;
  };

  std::string name(const Task& t) const {
    return plan_.policies[t.policy] + " on " + display_name(plan_.files[t.workload]);
  }

  SimOptions options_for(const Task& t) {
    SimOptions o = a_.options;
    o.policy = plan_.policies[t.policy];
    o.compat = plan_.compat;
    o.profiling = plan_.profiling;
    o.profile_store = plan_.profile_store;
    o.horizon = a_.horizon ? *a_.horizon : 0;
    o.record_rounds = !a_.events_out.empty();
    o.apps = plan_.apps[t.workload];
    o.reservations = plan_.reservations;
    o.round = a_.round               ? *a_.round
              : a_.options.round > 0 ? a_.options.round
                                     : default_round(o.policy);
    if (!a_.options.save_rounds_dir.empty()) {
      fs::path d = a_.options.save_rounds_dir;
      if (plan_.policies.size() > 1) d /= o.policy;
      if (plan_.files.size() > 1) d /= fs::path(plan_.files[t.workload]).stem();
      o.save_rounds_dir = d.string();
    }
    // One simulation: after kProgressAfter seconds, a line a second at most -- rewritten in
    // place on a terminal, one after the other with -v.
    if ((tty_ || cli::verbosity() >= 1) && tasks_.size() == 1) {
      o.progress = [this, rounds = 0L, last = 0.0](double now, int done, int total) mutable {
        ++rounds;
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        if (wall < kProgressAfter || wall - last < 1) return;
        last = wall;
        const std::string line = "simulated " + cli::duration(now) + ": " + std::to_string(done) +
                                 "/" + std::to_string(total) + " jobs done, " +
                                 std::to_string(rounds) + " rounds, " + cli::duration(wall) +
                                 " wall";
        cli::write_stderr(tty_ ? "\r" + line + "   " : line + "\n");
        progress_shown_ = tty_;
      };
    }
    return o;
  }

  void work() {
    for (;;) {
      std::size_t k;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (next_ >= tasks_.size()) return;
        k = next_++;
      }
      const Task& t = tasks_[k];
      try {
        SimResult r = simulate(cluster_, catalog_, plan_.workloads[t.workload], options_for(t));
        r.workload = display_name(plan_.files[t.workload]);
        results_[t.policy][t.workload] = std::move(r);
      } catch (...) {
        errors_[k] = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++finished_;
      if (tty_ && tasks_.size() > 1) {
        cli::write_stderr("\r" + std::to_string(finished_) + "/" + std::to_string(tasks_.size()) +
                          " simulations done   ");
      }
      cli::debug("sia-ctl", name(t) + " done");
    }
  }

  const SimulateArgs& a_;
  const Plan& plan_;
  const Cluster& cluster_;
  const Catalog& catalog_;
  std::vector<Task> tasks_;
  std::vector<std::vector<SimResult>> results_;
  std::vector<std::exception_ptr> errors_;
  const bool tty_ = cli::stderr_is_tty() && cli::verbosity() >= 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bool progress_shown_ = false;  // a progress line waits for its newline
  std::mutex mu_;
  std::size_t next_ = 0;
  int finished_ = 0;
};

// --no-timing: every wall-clock figure zeroed.
void clear_timing(std::vector<std::vector<SimResult>>& results) {
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

// The per-job (and per-app) and per-round records: to --jobs (and stdout with -o jsonl)
// and --events. Returns them for the report.
std::pair<std::vector<json>, std::vector<json>> write_records(
    const SimulateArgs& a, const std::vector<std::vector<SimResult>>& results) {
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
  return {std::move(job_records), std::move(round_records)};
}

// The SimResult document's data: the first policy's figures, and every policy's.
json result_json(const SimulateArgs& a, const Plan& plan, const Cluster& cluster,
                 const std::vector<std::vector<SimResult>>& results,
                 const std::vector<SimSummary>& totals) {
  json per_policy = json::array();
  for (std::size_t p = 0; p < plan.policies.size(); ++p) {
    json per = json::array();
    for (const auto& r : results[p]) {
      per.push_back({{"workload", r.workload}, {"summary", summary_json(r.summary)}});
    }
    per_policy.push_back(
        {{"policy", plan.policies[p]},
         {"round", results[p].front().round},
         {"summary", summary_json(totals[p])},
         {"avg_jct_ratio", totals[0].avg_jct > 0 ? totals[p].avg_jct / totals[0].avg_jct : 0.0},
         {"workloads", per}});
  }
  return json{{"cluster", cluster.name},
              {"policy", a.options.policy},
              {"profile", compat_name(plan.compat)},
              {"round", results[0].front().round},
              {"workloads", per_policy[0]["workloads"]},
              {"summary", summary_json(totals[0])},
              {"policies", per_policy}};
}

// -o table: one policy's summary, or the policies compared.
std::string result_table(const Plan& plan, const Cluster& cluster,
                         const std::vector<std::vector<SimResult>>& results,
                         const std::vector<SimSummary>& totals) {
  const std::string where =
      cluster.name + " (" + std::to_string(cluster.total_gpus()) + " GPUs), " +
      (plan.files.size() == 1 ? display_name(plan.files[0])
                              : plan.workload_path + " (" + std::to_string(plan.files.size()) +
                                    " workloads, jobs pooled)") +
      (plan.compat == Compat::reference ? ", reference profile" : "");
  if (plan.policies.size() == 1) {
    return summary_table(plan.policies[0] + " on " + where + ", " +
                             cli::fixed(results[0].front().round, 0) + " s rounds",
                         totals[0]);
  }
  return comparison_table(where, plan.policies, totals);
}

}  // namespace

int run_simulate(const SimulateArgs& a) {
  check_flags(a);
  // Not $SIA_CLUSTER (the live cluster's, sia-config(5)): the default workload is the bundled
  // cluster's, and a simulation does not change with the environment it runs in.
  const std::string cluster_file =
      a.cluster.empty()
          ? (fs::path(default_data_dir()) / "clusters" / "sia-hetero-64.toml").string()
          : a.cluster;
  Plan plan = make_plan(a);
  const Cluster cluster = scale_cluster(read_cluster(cluster_file), a.scale);
  if (!a.reservations.empty()) plan.reservations = read_reservations(a.reservations, cluster);
  Catalog catalog(a.catalog.empty() ? default_catalog_dir() : a.catalog);
  read_workloads(a, cluster, catalog, plan);
  for (const auto& n : catalog.names()) catalog.get(n);  // load before threads share it

  std::vector<std::vector<SimResult>> results = Runner(a, plan, cluster, catalog).run();
  if (a.no_timing) clear_timing(results);
  std::vector<SimSummary> totals;
  for (const auto& per : results) totals.push_back(pooled(per, plan.compat));

  auto [job_records, round_records] = write_records(a, results);
  const json result = result_json(a, plan, cluster, results, totals);
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
    cli::write_stdout(result_table(plan, cluster, results, totals));
  }
  return 0;
}

}  // namespace sia::app
