#include "app/simulate.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/table.hpp"
#include "core/atomic_file.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "sim/workload.hpp"

namespace sia::app {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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
  std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() < b.size();
    return a < b;
  });
  if (files.empty()) throw Error(ExitStatus::no_input, path + ": no workload files (.csv, .jsonl)");
  return files;
}

json summary_json(const SimSummary& s) {
  return json{{"jobs", s.jobs},
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
              {"rounds", s.rounds}};
}

json job_json(const JobResult& j, const std::vector<std::string>& types, const std::string& wl) {
  json gpu = json::object();
  for (std::size_t t = 0; t < types.size(); ++t) gpu[types[t]] = j.gpu_seconds[t];
  json out{{"type", "job"},         {"workload", wl},         {"name", j.name},
           {"model", j.model},      {"submission", j.submission}, {"completion", j.completion},
           {"jct", j.jct},          {"restarts", j.restarts}, {"queued", j.queued},
           {"gpu_seconds", gpu},    {"contention", j.contention}};
  out["isolated_jct"] = j.isolated_jct ? json(*j.isolated_jct) : json(nullptr);
  out["rho"] = j.rho ? json(*j.rho) : json(nullptr);
  return out;
}

json round_json(const RoundRecord& r, const std::vector<std::string>& types, const std::string& wl) {
  json jobs = json::array();
  for (const auto& j : r.jobs) {
    jobs.push_back(json::array({j.name, j.type >= 0 ? json(types[j.type]) : json(nullptr),
                                j.placement, j.batch_size, j.accum_steps, j.epoch, j.progress,
                                j.restarts,
                                j.completion ? json(*j.completion) : json(nullptr)}));
  }
  return json{{"type", "round"}, {"workload", wl},  {"t", r.t},
              {"active", r.active}, {"running", r.running}, {"jobs", jobs}};
}

// Pools several workloads' results the way the paper reports them: jobs pooled for JCT
// percentiles and GPU hours, contention and queue averaged over workloads.
SimSummary pooled(const std::vector<SimResult>& rs, bool reference) {
  SimResult all;
  all.round = rs.front().round;
  double makespan = 0, cmean = 0, qmean = 0, cmax = 0, qmax = 0;
  for (const auto& r : rs) {
    all.jobs.insert(all.jobs.end(), r.jobs.begin(), r.jobs.end());
    all.policy_runtimes.insert(all.policy_runtimes.end(), r.policy_runtimes.begin(),
                               r.policy_runtimes.end());
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

std::string hours(double s) { return cli::fixed(s / 3600.0, 2) + " h"; }

std::string summary_table(const std::string& title, const SimSummary& s) {
  std::string out = title + "\n";
  cli::Table t({"metric", "value"});
  t.add({"jobs", std::to_string(s.jobs)});
  t.add({"average JCT", hours(s.avg_jct)});
  t.add({"median JCT", hours(s.median_jct)});
  t.add({"p99 JCT", hours(s.p99_jct)});
  t.add({"makespan", hours(s.makespan)});
  t.add({"GPU hours per job", cli::fixed(s.gpu_hours_per_job, 2)});
  t.add({"restarts per job", cli::fixed(s.restarts_per_job, 2)});
  t.add({"contention mean (max)", cli::fixed(s.contention_mean, 1) + " (" + cli::fixed(s.contention_max, 0) + ")"});
  t.add({"queue mean (max)", cli::fixed(s.queue_mean, 1) + " (" + cli::fixed(s.queue_max, 0) + ")"});
  t.add({"unfair jobs (rho > 1)", cli::fixed(100 * s.unfair_fraction, 1) + " %"});
  t.add({"worst rho", cli::fixed(s.worst_rho, 2)});
  t.add({"policy runtime median (p95)", cli::fixed(s.policy_runtime_median * 1e3, 1) + " ms (" +
                                            cli::fixed(s.policy_runtime_p95 * 1e3, 1) + " ms)"});
  return out + t.render();
}

}  // namespace

int run_simulate(const SimulateArgs& a) {
  const std::string data = default_data_dir();
  const std::string cluster_file =
      a.cluster.empty() ? (fs::path(data) / "clusters" / "sia-hetero-64.toml").string() : a.cluster;
  const std::string workload_path =
      a.workload.empty() ? (fs::path(data) / "workloads" / "philly" / "workload-1.csv").string()
                         : a.workload;
  Cluster cluster = read_cluster(cluster_file);
  Catalog catalog(a.catalog.empty() ? default_catalog_dir() : a.catalog);
  const auto files = workload_files(workload_path);
  std::vector<std::vector<JobSpec>> workloads;
  for (const auto& f : files) workloads.push_back(read_workload(f, catalog));
  for (const auto& n : catalog.names()) catalog.get(n);  // load before threads share it

  SimOptions opt = a.options;
  opt.reference = a.compat == "reference";
  if (opt.round == 0) opt.round = default_round(opt.policy);
  opt.record_rounds = !a.events_out.empty();
  std::vector<SimResult> results(files.size());
  const bool tty = cli::stderr_is_tty() && cli::verbosity() >= 0;
  if (files.size() == 1) {
    if (tty) {
      double last_total = 0;
      for (const auto& j : workloads[0]) last_total = std::max(last_total, j.submit_time);
      opt.progress = [&](double now, int done, int total) {
        int width = 30;
        int filled = total ? width * done / total : width;
        std::string bar(filled, '#');
        bar.append(width - filled, '.');
        cli::write_stderr("\r[" + bar + "] " + std::to_string(done) + "/" + std::to_string(total) +
                          " jobs done, t = " + cli::duration(now) + "   ");
      };
    }
    results[0] = simulate(cluster, catalog, workloads[0], opt);
    if (tty) cli::write_stderr("\n");
  } else {
    // Workloads are independent: run them on the machine's cores.
    unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                                       static_cast<unsigned>(files.size())));
    std::vector<std::string> errors(files.size());
    std::size_t next = 0;
    std::mutex mu;
    int finished = 0;
    auto worker = [&] {
      for (;;) {
        std::size_t i;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (next >= files.size()) return;
          i = next++;
        }
        try {
          results[i] = simulate(cluster, catalog, workloads[i], opt);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
        std::lock_guard<std::mutex> lock(mu);
        ++finished;
        if (tty) {
          cli::write_stderr("\r" + std::to_string(finished) + "/" + std::to_string(files.size()) +
                            " workloads simulated   ");
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    if (tty) cli::write_stderr("\n");
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (!errors[i].empty()) throw Error(ExitStatus::data, display_name(files[i]) + ": " + errors[i]);
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) results[i].workload = display_name(files[i]);
  if (a.no_timing) {
    for (auto& r : results) {
      r.policy_runtimes.clear();
      r.summary.policy_runtime_median = r.summary.policy_runtime_p95 = 0;
    }
  }
  SimSummary total = files.size() == 1 ? results[0].summary : pooled(results, opt.reference);

  if (!a.jobs_out.empty()) {
    std::string text;
    for (const auto& r : results) {
      for (const auto& j : r.jobs) text += dump_json(job_json(j, r.gpu_types, r.workload), false) + "\n";
    }
    write_file_atomic(a.jobs_out, text);
  }
  if (!a.events_out.empty()) {
    std::string text;
    for (const auto& r : results) {
      for (const auto& rec : r.rounds) {
        text += dump_json(round_json(rec, r.gpu_types, r.workload), false) + "\n";
      }
    }
    write_file_atomic(a.events_out, text);
  }
  if (a.format == cli::Format::jsonl) {
    for (const auto& r : results) {
      for (const auto& j : r.jobs) {
        cli::write_stdout(dump_json(job_json(j, r.gpu_types, r.workload), false) + "\n");
      }
    }
  } else if (a.format == cli::Format::json) {
    json per = json::array();
    for (const auto& r : results) {
      per.push_back({{"workload", r.workload}, {"summary", summary_json(r.summary)}});
    }
    json data{{"cluster", cluster.name},
              {"policy", opt.policy},
              {"profile", opt.reference ? "reference" : "default"},
              {"round", opt.round},
              {"workloads", per},
              {"summary", summary_json(total)}};
    cli::print_document("SimResult", json{{"generator", "sia-ctl simulate"}}, data);
  } else {
    std::string title = opt.policy + " on " + cluster.name + " (" +
                        std::to_string(cluster.total_gpus()) + " GPUs), " +
                        (files.size() == 1 ? results[0].workload
                                           : workload_path + " (" + std::to_string(files.size()) +
                                                 " workloads, jobs pooled)") +
                        ", " + cli::fixed(opt.round, 0) + " s rounds" +
                        (opt.reference ? ", reference profile" : "");
    cli::write_stdout(summary_table(title, total));
  }
  return 0;
}

}  // namespace sia::app
