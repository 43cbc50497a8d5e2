#include "sim/fairness.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "sim/sim_quirks.hpp"

namespace sia {

namespace {

Cluster one_type_cluster(const Cluster& cluster, int type, int gpus) {
  const GpuType& t = cluster.types[type];
  Cluster c;
  c.name = cluster.name + "-" + t.name + "-share";
  GpuType g = t;
  g.node_count = 0;
  c.types.push_back(g);
  NodeGroup ng;
  ng.gpu_type = t.name;
  ng.gpus_per_node = t.gpus_per_node;
  ng.count = (gpus + t.gpus_per_node - 1) / t.gpus_per_node;
  ng.name_prefix = t.name + "-";
  c.groups.push_back(ng);
  c.finalize("fair-share", ExitStatus::software);
  return c;
}

// SimQuirks::rho_of_mean_isolated of the simulation's profile.
bool rho_of_mean_isolated(const SimOptions& options) {
  return sim_quirks(options.compat).rho_of_mean_isolated;
}

// Runs fn(k) for k in [0, n) on the machine's cores; an exception's message goes to
// errors[k].
std::vector<std::string> run_parallel(std::size_t n, const std::function<void(std::size_t)>& fn) {
  std::vector<std::string> errors(n);
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t k = next++; k < n; k = next++) {
      try {
        fn(k);
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), n));
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < threads; ++w) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  return errors;
}

// The app sizes an isolated app runs on around a share of V GPUs of a type with `gpn` GPUs
// per node: floor(V) and ceil(V) below a node's worth (at least 1), else whole nodes.
std::pair<int, int> app_sizes(double share, int gpn) {
  if (share < gpn) {
    return {std::max(1, static_cast<int>(std::floor(share))),
            std::max(1, static_cast<int>(std::ceil(share)))};
  }
  return {gpn * static_cast<int>(std::floor(share / gpn)),
          gpn * static_cast<int>(std::ceil(share / gpn))};
}

// A one-type cluster of exactly `gpus` GPUs: one node when fewer than a node's, else whole
// nodes (`gpus` a multiple of the type's GPUs per node).
Cluster exact_share_cluster(const Cluster& cluster, int type, int gpus) {
  Cluster c = one_type_cluster(cluster, type, gpus);
  if (gpus < cluster.types[type].gpus_per_node) {
    c.types[0].gpus_per_node = gpus;
    c.groups[0].gpus_per_node = gpus;
    c.groups[0].count = 1;
    c.finalize("fair-share", ExitStatus::software);
  }
  return c;
}

// An app's isolated completion time on `gpus` GPUs of `type`: its trials alone, with their
// app scheduler, each trial capped at the share.
double isolated_app(const std::vector<JobSpec>& trials, const Cluster& cluster,
                    const Catalog& catalog, int type, int gpus, const SimOptions& iso) {
  double first = trials.front().submit_time;
  for (const auto& t : trials) first = std::min(first, t.submit_time);
  std::vector<JobSpec> alone = trials;
  for (auto& s : alone) {
    if (!catalog.get(s.model).gpu(cluster.types[type].name)) return -1;
    s.submit_time -= first;
    s.max_gpus = s.max_gpus ? std::min(s.max_gpus, gpus) : gpus;
    if (s.min_gpus > gpus) s.min_gpus = gpus;
    if (s.gpus > gpus) s.gpus = gpus;
  }
  SimResult r = simulate(exact_share_cluster(cluster, type, gpus), catalog, alone, iso);
  double end = 0;
  for (const auto& j : r.jobs) end = std::max(end, j.completion);
  return end;
}

// Finish-time fairness per app (Themis §4.3.2 with Sia's Eq. 6 over GPU types): an app of
// one has its job's rho; a search is simulated alone on its fair share, cluster-GPUs over
// its N_avg (whole nodes interpolated linearly above one node's GPUs).
void add_app_fairness(SimResult& result, const Cluster& cluster, const Catalog& catalog,
                      const std::vector<JobSpec>& workload, const SimOptions& iso) {
  if (result.apps.empty()) return;
  std::map<std::string, std::vector<JobSpec>> trials;
  std::map<std::string, std::size_t> job_of;
  for (std::size_t i = 0; i < workload.size(); ++i) {
    if (workload[i].app.empty()) {
      job_of[workload[i].name] = i;
    } else {
      trials[workload[i].app].push_back(workload[i]);
    }
  }
  struct Need {
    std::size_t app;
    int type, gpus;
  };
  std::vector<Need> work;
  for (std::size_t a = 0; a < result.apps.size(); ++a) {
    AppResult& ar = result.apps[a];
    if (!trials.count(ar.name)) {
      const JobResult& jr = result.jobs[job_of.at(ar.name)];
      ar.rho = jr.rho;
      ar.isolated_act = jr.isolated_jct;
      continue;
    }
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      const int gpn = cluster.types[t].gpus_per_node;
      const double share = cluster.types[t].capacity() / std::max(1.0, ar.contention);
      const auto [lo, hi] = app_sizes(share, gpn);
      std::set<int> sizes{lo, hi};
      for (int g : sizes) work.push_back({a, static_cast<int>(t), g});
    }
  }
  std::vector<double> act(work.size(), -1);
  const std::vector<std::string> errors = run_parallel(work.size(), [&](std::size_t k) {
    act[k] = isolated_app(trials.at(result.apps[work[k].app].name), cluster, catalog, work[k].type,
                          work[k].gpus, iso);
  });
  std::map<std::tuple<std::size_t, int, int>, double> got;
  for (std::size_t k = 0; k < work.size(); ++k) {
    if (!errors[k].empty()) {
      throw Error(ExitStatus::software,
                  "isolated run of app " + result.apps[work[k].app].name + ": " + errors[k]);
    }
    got[{work[k].app, work[k].type, work[k].gpus}] = act[k];
  }
  for (std::size_t a = 0; a < result.apps.size(); ++a) {
    AppResult& ar = result.apps[a];
    if (!trials.count(ar.name)) continue;
    const double offset = std::fmod(ar.submission, iso.round);
    double weight = 0, rho_sum = 0, act_sum = 0;
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      const int gpn = cluster.types[t].gpus_per_node;
      const double share = cluster.types[t].capacity() / std::max(1.0, ar.contention);
      const auto [lo, hi] = app_sizes(share, gpn);
      const double x = got.at({a, static_cast<int>(t), lo});
      const double y = got.at({a, static_cast<int>(t), hi});
      if (x < 0 || y < 0) continue;
      double j = share < 1 ? x / share : hi == lo ? x : x + (share - lo) / (hi - lo) * (y - x);
      j = std::max(1.0, j - offset);
      const int cap = cluster.types[t].capacity();
      weight += cap;
      act_sum += cap * j;
      rho_sum += cap * (ar.act / j);
    }
    if (weight <= 0) continue;
    ar.isolated_act = act_sum / weight;
    ar.rho = rho_of_mean_isolated(iso) ? ar.act / *ar.isolated_act : rho_sum / weight;
  }
}

// The options of an isolated run: the shared simulation's, without fairness, saved rounds,
// round records or progress.
SimOptions isolated_options(const SimOptions& options) {
  SimOptions iso = options;
  iso.fairness = false;
  iso.save_rounds_dir.clear();
  iso.record_rounds = false;
  iso.progress = nullptr;
  return iso;
}

// The share of type `t` a job with this average contention gets, and the whole GPU counts
// around it that are simulated (one GPU below one).
void fair_share(const Cluster& cluster, std::size_t t, double contention, int* lo, int* hi,
                double* share) {
  const double n_avg = std::max(1.0, contention);
  *share = cluster.types[t].capacity() / n_avg;
  *lo = static_cast<int>(std::floor(*share));
  *hi = static_cast<int>(std::ceil(*share));
  if (*lo < 1) *lo = *hi = 1;
}

}  // namespace

IsolatedRuns::IsolatedRuns(const Cluster& cluster, const Catalog& catalog,
                           const std::vector<JobSpec>& workload, const SimOptions& options)
    : cluster_(cluster), catalog_(catalog), iso_(isolated_options(options)) {
  for (const auto& spec : workload) catalog_.get(spec.model, "job " + spec.name);
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned w = 1; w < hw; ++w) workers_.emplace_back([this] { work(); });
}

IsolatedRuns::~IsolatedRuns() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    for (auto& [k, run] : runs_) run.cancel = true;  // no result is asked for any more
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

IsolatedRuns::Key IsolatedRuns::key_of(const JobSpec& spec, int type, int gpus) const {
  return Key{spec.model,
             static_cast<int>(spec.adaptivity),
             spec.batch_size,
             spec.gpus,
             spec.restart_cost,
             cluster_.types[type].name,
             gpus};
}

void IsolatedRuns::add_job(const JobSpec& spec, double contention) {
  if (!catalog_.loaded(spec.model)) {
    throw Error(ExitStatus::software, "isolated runs of " + spec.name + ": model " + spec.model +
                                          " was not loaded before the workers started");
  }
  add_runs(spec, contention, true);
}

void IsolatedRuns::speculate(const JobSpec& spec, double contention) {
  if (workers_.empty() || !catalog_.loaded(spec.model)) return;
  // Only a guess that held for the job's last two calls: a share still moving would have
  // workers make runs no one needs.
  std::vector<int> guess;
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) {
    int lo, hi;
    double share;
    fair_share(cluster_, t, contention, &lo, &hi, &share);
    guess.push_back(lo);
    guess.push_back(hi);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    Guess& last = guesses_[spec.name];
    if (last.counts == guess) {
      ++last.repeats;
    } else {
      last.counts = std::move(guess);
      last.repeats = 0;
    }
    if (last.repeats < 2) return;
  }
  add_runs(spec, contention, false);
}

std::size_t IsolatedRuns::speculated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return speculated_;
}

void IsolatedRuns::add_runs(const JobSpec& spec, double contention, bool needed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (checked_ && !needed) return;  // the results are in: nothing runs ahead any more
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) {
    // A type the job may not use has no isolated run: the job would never start there.
    if (!spec.allows_type(cluster_.types[t].name)) continue;
    int lo, hi;
    double share;
    fair_share(cluster_, t, contention, &lo, &hi, &share);
    for (int g : {lo, hi}) {
      Key k = key_of(spec, static_cast<int>(t), g);
      if (auto it = runs_.find(k); it != runs_.end()) {
        Run& run = it->second;
        if (needed && !run.needed) {
          run.needed = true;  // speculated: now first in line, unless a worker has it
          if (!run.started) queue_.push_back(std::move(k));
        }
        continue;
      }
      Run& r = runs_[k];
      r.spec = spec;
      r.type = static_cast<int>(t);
      r.gpus = g;
      r.needed = needed;
      if (!needed) ++speculated_;
      (needed ? queue_ : speculative_).push_back(std::move(k));
    }
  }
  cv_.notify_all();
}

IsolatedRuns::Run* IsolatedRuns::next_run() {
  // A key in both queues (speculated, then needed) is taken once: the first time.
  for (std::deque<Key>* q : {&queue_, &speculative_}) {
    while (!q->empty()) {
      Run& run = runs_.at(q->front());  // map nodes stay put while others are added
      q->pop_front();
      if (run.started) continue;
      run.started = true;
      return &run;
    }
  }
  return nullptr;
}

namespace {

struct Cancelled {};  // thrown through simulate() to stop a run nothing needs

}  // namespace

void IsolatedRuns::execute(Run& run) {
  JobSpec alone = run.spec;
  alone.submit_time = 0;
  alone.app.clear();  // a trial alone runs to its end
  alone.max_gpus = run.gpus;
  if (alone.min_gpus > run.gpus) alone.min_gpus = run.gpus;
  if (alone.gpus > run.gpus) alone.gpus = run.gpus;
  SimOptions iso = iso_;
  iso.progress = [&run](double, int, int) {
    if (run.cancel.load(std::memory_order_relaxed)) throw Cancelled{};
  };
  try {
    if (catalog_.get(run.spec.model).gpu(cluster_.types[run.type].name)) {
      SimResult r =
          simulate(one_type_cluster(cluster_, run.type, run.gpus), catalog_, {alone}, iso);
      run.jct = r.jobs.front().jct;
    }
  } catch (const Cancelled&) {
    // Not needed: no result.
  } catch (const std::exception& e) {
    run.error = e.what();
  }
}

void IsolatedRuns::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Run* run = nullptr;
    cv_.wait(lock, [&] { return stop_ || (run = next_run()) != nullptr; });
    if (stop_) {
      if (run) run->started = false;
      return;
    }
    ++busy_;
    lock.unlock();
    execute(*run);
    lock.lock();
    --busy_;
    cv_.notify_all();
  }
}

void IsolatedRuns::finish() {
  std::unique_lock<std::mutex> lock(mu_);
  // Runs nobody needs: the queued ones never start, the running ones stop.
  speculative_.clear();
  for (auto& [k, run] : runs_) {
    if (!run.needed) run.cancel = true;
  }
  while (!queue_.empty()) {
    Run& run = runs_.at(queue_.front());
    queue_.pop_front();
    if (run.started) continue;
    run.started = true;
    lock.unlock();
    execute(run);
    lock.lock();
  }
  cv_.wait(lock, [this] { return busy_ == 0; });
  for (const auto& [k, run] : runs_) {
    if (run.needed && !run.error.empty()) {
      throw Error(ExitStatus::software, "isolated run of " + run.spec.name + ": " + run.error);
    }
  }
}

double IsolatedRuns::jct(const JobSpec& spec, int type, int gpus) {
  if (!checked_) {
    finish();
    std::lock_guard<std::mutex> lock(mu_);
    checked_ = true;
  }
  return runs_.at(key_of(spec, type, gpus)).jct;
}

void add_finish_time_fairness(SimResult& result, const Cluster& cluster, const Catalog& catalog,
                              const std::vector<JobSpec>& workload, const SimOptions& options,
                              IsolatedRuns* early) {
  std::optional<IsolatedRuns> own;
  IsolatedRuns& runs = early ? *early : own.emplace(cluster, catalog, workload, options);
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    if (result.jobs[i].stopped) continue;  // its isolated run is its app's
    runs.add_job(workload[i], result.jobs[i].contention);
  }
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    JobResult& jr = result.jobs[i];
    const JobSpec& spec = workload[i];
    if (jr.stopped) continue;
    // Waiting for the first round boundary is part of the shared JCT; an isolated run
    // that starts at a boundary waits a whole round, this job waited less.
    const double offset = std::fmod(spec.submit_time, options.round);
    double weight = 0, rho_sum = 0, jct_sum = 0;
    for (std::size_t t = 0; t < cluster.types.size(); ++t) {
      if (!spec.allows_type(cluster.types[t].name)) continue;
      const int cap = cluster.types[t].capacity();
      int lo, hi;
      double share;
      fair_share(cluster, t, jr.contention, &lo, &hi, &share);
      double j;
      if (share < 1) {
        double one = runs.jct(spec, static_cast<int>(t), 1);
        if (one < 0) continue;
        j = one / share;
      } else {
        double a = runs.jct(spec, static_cast<int>(t), lo);
        double b = hi == lo ? a : runs.jct(spec, static_cast<int>(t), hi);
        if (a < 0 || b < 0) continue;
        j = a + (share - lo) * (b - a);
      }
      j = std::max(1.0, j - offset);
      weight += cap;
      jct_sum += cap * j;
      rho_sum += cap * (jr.jct / j);
    }
    if (weight <= 0) continue;
    jr.isolated_jct = jct_sum / weight;
    jr.rho = rho_of_mean_isolated(options) ? jr.jct / *jr.isolated_jct : rho_sum / weight;
  }
  add_app_fairness(result, cluster, catalog, workload, isolated_options(options));
}

}  // namespace sia
