#include "sim/simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/compat.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "model/shared_profiles.hpp"
#include "os/atomic_file.hpp"
#include "os/clock.hpp"
#include "place/placer.hpp"
#include "policy/successive_halving.hpp"
#include "sim/fairness.hpp"
#include "sim/ground_truth.hpp"
#include "sim/searches.hpp"
#include "sim/sim_job.hpp"

namespace sia {

namespace {

std::vector<int> shape_of(const JobPlacement& jp) {
  std::vector<int> s;
  for (const auto& ng : jp.nodes) s.push_back(static_cast<int>(ng.gpus.size()));
  return s;
}

// Same nodes with the same GPU counts (the artifact compares node ids only); with
// `indices`, the same GPU indices too (a job moved to other GPUs must restart).
bool same_nodes(const JobPlacement* a, const JobPlacement* b, bool indices) {
  if (!a || !b) return a == b;
  if (a->type != b->type || a->nodes.size() != b->nodes.size()) return false;
  for (std::size_t k = 0; k < a->nodes.size(); ++k) {
    if (a->nodes[k].node != b->nodes[k].node ||
        a->nodes[k].gpus.size() != b->nodes[k].gpus.size()) {
      return false;
    }
    if (indices && a->nodes[k].gpus != b->nodes[k].gpus) return false;
  }
  return true;
}

// The artifact's fix for shapes past the largest profiled node count: spread the GPUs
// evenly over that many nodes.
std::vector<int> physical_fix(std::vector<int> shape, int max_nodes) {
  if (max_nodes <= 0 || static_cast<int>(shape.size()) <= max_nodes) return shape;
  int total = 0;
  for (int g : shape) total += g;
  const int per = (total + max_nodes - 1) / max_nodes;
  std::vector<int> out;
  while (total > 0) {
    out.push_back(std::min(per, total));
    total -= out.back();
  }
  return out;
}

std::string round_prefix(const std::string& dir, int round) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "r%06d", round);
  return (std::filesystem::path(dir) / buf).string();
}

}  // namespace

SimResult simulate(const Cluster& cluster, const Catalog& catalog,
                   const std::vector<JobSpec>& workload_in, const SimOptions& opts_in) {
  SimOptions opts = opts_in;
  if (opts.round == 0) opts.round = default_round(opts.policy);
  if (!(opts.round > 0)) throw Error(ExitStatus::usage, "--round: must be > 0 seconds");
  EstimatorOptions eo = estimator_options(opts.reference ? Compat::reference : Compat::standard);
  eo.cap_profiled_nodes = true;  // the ground truth ends where the measurements end
  if (!opts.reference) eo.profile_store = opts.profile_store;
  apply_profiling(eo, opts.profiling);
  eo.baseline_info = opts.policy != "sia";
  Estimator est(cluster, catalog, eo);
  PolicyOptions po = opts.policy_options;
  po.quirks = policy_quirks(opts.reference ? Compat::reference : Compat::standard);
  po.round = opts.round;
  po.wall_clock = false;  // the work limits alone: the same answers on any machine, any load
  std::unique_ptr<Policy> policy = make_policy(opts.policy, po);
  const bool true_rates = opts.reference && reads_true_rates(opts.policy);
  // Baselines "+TJ" run every job at its tuned GPU count and batch.
  std::vector<JobSpec> workload = workload_in;
  if (uses_tuned_jobs(opts.policy)) {
    for (auto& s : workload) {
      if (s.gpus > 0 && s.batch_size > 0) s.adaptivity = Adaptivity::rigid;
    }
  }

  std::shared_ptr<TruthStore> store = opts.truths ? opts.truths : std::make_shared<TruthStore>();
  std::vector<SimJob> jobs;
  jobs.reserve(workload.size());
  for (const auto& spec : workload) {
    if (spec.model.empty()) {
      throw Error(ExitStatus::data, "job " + spec.name + ": the simulator needs a catalog model");
    }
    const ModelInfo& m = catalog.get(spec.model, "job " + spec.name);
    for (const auto& g : m.gpus) {
      if (g.pipeline_stages > 1) {
        throw Error(ExitStatus::data, "job " + spec.name + ": model " + m.name +
                                          " is pipeline-parallel; the simulator has no ground "
                                          "truth for pipelines");
      }
    }
    std::vector<GroundTruth*> per_type;
    for (const auto& t : cluster.types) per_type.push_back(store->truth(m, t.name));
    JobState js;
    js.spec = spec;
    double cost = spec.restart_cost >= 0 ? spec.restart_cost : m.restart_cost;
    jobs.emplace_back(std::move(js), m, per_type, store->validation(m), cluster, cost,
                      sim_job_quirks(opts.reference ? Compat::reference : Compat::standard));
  }

  // Apps: each named app's trials and app scheduler; a job without an app is an app of one.
  struct AppRun {
    std::string name;
    AppSpec spec;  // its scheduler, metric and direction
    std::vector<int> trials;
    std::vector<int> bracket;                 // each trial's (as trials; hyperband)
    std::vector<SuccessiveHalving> brackets;  // one unless hyperband
    double contention_sum = 0;
    int contention_rounds = 0;
  };
  std::vector<AppRun> apps;
  std::vector<int> app_of(jobs.size(), -1);
  std::vector<std::string> stop_reason(jobs.size());
  // At its phase's budget, waiting for the others (GPUs released; a trial released here is
  // not active that round, so the next placement starts it afresh).
  std::vector<char> held(jobs.size(), 0);
  {
    std::map<std::string, int> index;
    for (std::size_t i = 0; i < workload.size(); ++i) {
      const std::string& a = workload[i].app;
      auto it = index.find(a.empty() ? "\n" + workload[i].name : a);
      if (it == index.end()) {
        AppSpec spec;
        for (const auto& x : opts.apps) {
          if (!a.empty() && x.name == a) spec = x;
        }
        spec.trial_template.reset();
        it = index.emplace(a.empty() ? "\n" + workload[i].name : a, static_cast<int>(apps.size()))
                 .first;
        apps.push_back({a.empty() ? workload[i].name : a, std::move(spec), {}, {}, {}});
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
  }
  const bool has_apps = std::any_of(workload.begin(), workload.end(),
                                    [](const JobSpec& s) { return !s.app.empty(); });

  SimResult result;
  result.cluster = cluster.name;
  result.policy = opts.policy;
  result.profile = compat_name(opts.reference ? Compat::reference : Compat::standard);
  result.round = opts.round;
  for (const auto& t : cluster.types) result.gpu_types.push_back(t.name);
  std::vector<double> alloc_gpu_seconds(jobs.size(), 0.0);
  std::vector<double> queued(jobs.size(), 0.0);
  std::map<std::string, Config> decided;
  std::optional<Allocation> prev_alloc;
  std::optional<Placement> prev_place;
  if (!opts.save_rounds_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.save_rounds_dir, ec);
    if (ec) throw Error(ExitStatus::cant_create, opts.save_rounds_dir + ": " + ec.message());
    os::write_file_atomic((std::filesystem::path(opts.save_rounds_dir) / "cluster.json").string(),
                          dump_document("Cluster", {}, cluster_to_json(cluster), true) + "\n",
                          os::kPublicFile);
  }

  // Finish-time fairness: a job's isolated runs start on other cores as soon as it has
  // finished (its contention is final then), while this simulation goes on; a long job's
  // are also made ahead (IsolatedRuns::speculate).
  std::optional<IsolatedRuns> isolated;
  SimOptions with_store = opts;
  with_store.truths = store;
  if (opts.fairness && opts.horizon == 0) {
    isolated.emplace(cluster, catalog, workload_in, with_store);
  }
  double now = 0;
  int done = 0, round_no = 0;
  const int total = static_cast<int>(jobs.size());
  while (done < total && !(opts.horizon > 0 && now >= opts.horizon)) {
    std::vector<char> was_done(total);
    for (int i = 0; i < total; ++i) was_done[i] = jobs[i].completed();
    // A trial trains no further than its phase's budget (the rung).
    for (const auto& app : apps) {
      for (std::size_t t = 0; t < app.trials.size(); ++t) {
        jobs[app.trials[t]].set_limit(app.brackets[app.bracket[t]].budget());
      }
    }
    for (auto& j : jobs) j.step(opts.round, est);
    // The profile store learns what the running jobs measured (estimator.hpp).
    for (const auto& j : jobs) {
      if (!j.placement().empty()) est.record(j.state());
    }
    now += opts.round;
    ++round_no;
    // App schedulers: a trial at its phase's budget waits (its GPUs freed) until every
    // trial of the phase (of its bracket, for hyperband) is there; then the worse ones stop,
    // freed this round.
    for (auto& app : apps) {
      for (std::size_t k = 0; k < app.brackets.size(); ++k) {
        SuccessiveHalving& sh = app.brackets[k];
        std::vector<TrialProgress> survivors;
        std::vector<int> alive;
        for (std::size_t t = 0; t < app.trials.size(); ++t) {
          const int i = app.trials[t];
          if (app.bracket[t] != static_cast<int>(k) || jobs[i].completed()) continue;
          const double f = jobs[i].fraction();
          survivors.push_back({jobs[i].name(), f, simulated_loss(workload[i], f)});
          alive.push_back(i);
        }
        const int phase = sh.phase();
        const std::vector<HalvingStop> stops = sh.close_phase(survivors);
        if (sh.phase() == phase) {
          // Still waiting for some: the trials at the budget stop training (GPUs freed).
          for (std::size_t s = 0; s < alive.size(); ++s) {
            const int i = alive[s];
            if (held[i] || !sh.reached(survivors[s])) continue;
            held[i] = 1;
            jobs[i].apply(-1, {}, false, est);
            decided.erase(jobs[i].name());
          }
          continue;
        }
        for (int i : alive) held[i] = 0;
        for (const auto& st : stops) {
          for (int i : alive) {
            if (jobs[i].name() != st.name) continue;
            jobs[i].apply(-1, {}, false, est);
            decided.erase(jobs[i].name());
            jobs[i].stop(now);
            stop_reason[i] = st.reason;
          }
        }
      }
    }
    done = 0;
    std::vector<int> active, finished_now;
    std::vector<char> app_active(apps.size(), 0);
    for (int i = 0; i < total; ++i) {
      if (jobs[i].completed()) {
        ++done;
        if (!was_done[i]) {
          finished_now.push_back(i);
          if (isolated && !jobs[i].stopped()) {
            isolated->add_job(workload_in[i], jobs[i].mean_contention());
          }
        }
      } else if (jobs[i].submission_time() <= now) {
        app_active[app_of[i]] = 1;
        if (!held[i]) active.push_back(i);
      }
    }
    const int active_apps =
        static_cast<int>(std::count(app_active.begin(), app_active.end(), char{1}));
    for (std::size_t a = 0; a < apps.size(); ++a) {
      if (!app_active[a]) continue;
      apps[a].contention_sum += active_apps;
      ++apps[a].contention_rounds;
    }
    RoundRecord rec;
    rec.t = now;
    rec.active = static_cast<int>(active.size());
    rec.gpus.assign(cluster.types.size(), 0);
    if (!active.empty()) {
      const double estimate_start = os::now_seconds();
      GoodputMatrix m;
      m.cluster = cluster;
      m.profile = result.profile;
      std::vector<std::string> order;
      std::vector<JobState*> views;
      for (int i : active) {
        auto d = decided.find(jobs[i].name());
        JobState& view = jobs[i].scheduler_view(
            now, d == decided.end() ? std::optional<Config>() : std::optional<Config>(d->second));
        m.jobs.push_back(est.estimate_job(view));
        if (true_rates) jobs[i].show_true_rates(m.jobs.back());
        if (!workload[i].app.empty()) {
          const AppRun& app = apps[app_of[i]];
          const auto t = static_cast<std::size_t>(
              std::find(app.trials.begin(), app.trials.end(), i) - app.trials.begin());
          const int k = app.bracket[t];
          m.jobs.back().app = bracket_ref(app.name, app.spec.scheduler, app.bracket, k,
                                          app.brackets[static_cast<std::size_t>(k)].phase());
        }
        order.push_back(jobs[i].name());
        views.push_back(&view);
      }
      std::sort(m.jobs.begin(), m.jobs.end(),
                [](const GoodputRow& a, const GoodputRow& b) { return a.job < b.job; });
      m.order = order;
      // Keep only active jobs' previous decisions, as a policy sees them.
      if (prev_alloc) {
        std::vector<JobAllocation> kept;
        for (const auto& ja : prev_alloc->jobs) {
          if (std::find(order.begin(), order.end(), ja.job) != order.end()) kept.push_back(ja);
        }
        prev_alloc->jobs = std::move(kept);
      }
      const double t0 = os::now_seconds();
      Allocation alloc = policy->allocate(m, prev_alloc);
      const double t1 = os::now_seconds();
      rec.policy_runtime = t1 - t0;
      result.policy_runtimes.push_back(rec.policy_runtime);
      result.round_runtimes.push_back(t1 - estimate_start);
      alloc.order = order;  // submission order: the reference placer breaks ties with it
      Placement place_now = opts.reference ? reference_placement(alloc, cluster, prev_place, &order)
                                           : place(alloc, cluster, prev_place);
      if (!opts.save_rounds_dir.empty()) {
        const std::string pre = round_prefix(opts.save_rounds_dir, round_no);
        nlohmann::json list = nlohmann::json::array();
        for (JobState* v : views) list.push_back(job_state_to_json(*v));
        nlohmann::json meta{{"generator", "sia-ctl simulate"},
                            {"round", round_no},
                            {"t", now},
                            {"profile", result.profile},
                            {"policy", opts.policy}};
        os::write_file_atomic(
            pre + "-jobs.json",
            dump_document("Jobs", meta, nlohmann::json{{"jobs", list}}, true) + "\n",
            os::kPublicFile);
        os::write_file_atomic(pre + "-profiles.json",
                              shared_profiles_document(est.shared_profiles(), meta),
                              os::kPublicFile);
        os::write_file_atomic(pre + "-goodput.json", goodput_matrix_document(m, meta, true) + "\n",
                              os::kPublicFile);
        os::write_file_atomic(
            pre + "-allocation.json",
            dump_document("Allocation", meta, allocation_to_json(alloc), true) + "\n",
            os::kPublicFile);
        os::write_file_atomic(
            pre + "-placement.json",
            dump_document("Placement", meta, placement_to_json(place_now, cluster), true) + "\n",
            os::kPublicFile);
      }
      for (int i : active) {
        SimJob& job = jobs[i];
        job.contention().push_back(active_apps);
        const JobPlacement* now_p = place_now.find(job.name());
        const JobPlacement* before = prev_place ? prev_place->find(job.name()) : nullptr;
        if (!same_nodes(now_p, before, !opts.reference)) {
          if (now_p) {
            std::vector<int> shape = shape_of(*now_p);
            bool restart = now_p->restart;
            if (opts.reference) {
              const ModelGpu* g =
                  catalog.get(job.state().spec.model).gpu(cluster.types[now_p->type].name);
              shape = physical_fix(shape, g ? g->max_profiled_nodes : 0);
              restart = now_p->type != job.type() || shape != job.placement();
            }
            job.apply(now_p->type, shape, restart, est);
          } else {
            job.apply(-1, {}, false, est);
          }
        }
        if (const JobAllocation* ja = alloc.find(job.name()); ja && ja->config && now_p) {
          decided[job.name()] = *ja->config;
        } else {
          decided.erase(job.name());
        }
      }
      prev_alloc = std::move(alloc);
      prev_place = std::move(place_now);
      // A long job's isolated runs would start last, when it finishes: idle workers run
      // the ones its contention so far points to ahead (asked every 10 rounds, after 30).
      for (int i : active) {
        const std::size_t rounds = jobs[i].contention().size();
        if (isolated && workload_in[i].app.empty() && rounds >= 30 && rounds % 10 == 0) {
          isolated->speculate(workload_in[i], jobs[i].mean_contention());
        }
      }
    }
    for (int i : active) {
      if (jobs[i].placement().empty()) {
        queued[i] += opts.round;
      } else {
        ++rec.running;
        alloc_gpu_seconds[i] += jobs[i].gpus() * opts.round;
        if (jobs[i].type() >= 0) rec.gpus[jobs[i].type()] += jobs[i].gpus();
      }
    }
    if (opts.record_rounds) {
      std::vector<int> shown = finished_now;  // jobs that finished this round, then active ones
      shown.insert(shown.end(), active.begin(), active.end());
      for (int i : shown) {
        const SimJob& j = jobs[i];
        rec.jobs.push_back({j.name(), j.type(), j.placement(), j.batch_size(), j.accum_steps(),
                            j.epoch(), j.progress(), j.restarts(), j.completion_time()});
      }
    }
    result.rounds.push_back(std::move(rec));
    if (opts.progress) opts.progress(now, done, total);
    if (now > opts.max_time && done < total) {
      std::string stuck;
      for (int i : active) {
        if (stuck.size() > 200) break;
        stuck += (stuck.empty() ? "" : ", ") + jobs[i].name();
      }
      char days[32];
      std::snprintf(days, sizeof days, "%g", opts.max_time / 86400);
      throw Error(ExitStatus::data, std::string("simulation passed ") + days +
                                        " days with jobs unfinished (" + stuck +
                                        "): can the cluster run them at all?");
    }
  }

  std::vector<int> result_at(jobs.size(), -1);  // a job's index in result.jobs
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const SimJob& j = jobs[i];
    if (!j.completion_time()) continue;  // past the horizon
    result_at[i] = static_cast<int>(result.jobs.size());
    JobResult r;
    r.name = j.name();
    r.model = j.state().spec.model;
    r.app = workload[i].app;
    r.stopped = j.stopped();
    r.stop_reason = stop_reason[i];
    r.submission = j.submission_time();
    r.completion = *j.completion_time();
    r.jct = r.completion - r.submission;
    r.restarts = j.restarts();
    r.queued = queued[i];
    r.gpu_seconds =
        opts.reference ? std::vector<double>(cluster.types.size(), 0.0) : j.gpu_seconds_by_type();
    if (opts.reference) {
      // The artifact's pooling: whole rounds of the GPUs allocated, on the type held.
      double held = 0;
      for (double s : j.gpu_seconds_by_type()) held += s;
      for (std::size_t t = 0; t < cluster.types.size(); ++t) {
        r.gpu_seconds[t] = held > 0 ? alloc_gpu_seconds[i] * j.gpu_seconds_by_type()[t] / held : 0;
      }
    }
    r.contention = j.mean_contention();
    result.jobs.push_back(std::move(r));
  }
  if (has_apps) {
    for (const auto& app : apps) {
      // An app with a trial past the horizon has not completed: left out, as its jobs are.
      if (std::any_of(app.trials.begin(), app.trials.end(),
                      [&](int i) { return result_at[i] < 0; })) {
        continue;
      }
      AppResult ar;
      ar.name = app.name;
      ar.trials = static_cast<int>(app.trials.size());
      ar.submission = result.jobs[result_at[app.trials.front()]].submission;
      for (int i : app.trials) {
        const JobResult& jr = result.jobs[result_at[i]];
        ar.stopped += jr.stopped;
        ar.submission = std::min(ar.submission, jr.submission);
        ar.completion = std::max(ar.completion, jr.completion);
        if (!jr.stopped && !workload[i].app.empty()) {
          const double m = simulated_loss(workload[i], 1.0);
          ar.best_metric = ar.best_metric ? std::min(*ar.best_metric, m) : m;
        }
      }
      ar.act = ar.completion - ar.submission;
      ar.contention = app.contention_rounds ? app.contention_sum / app.contention_rounds : 0;
      result.apps.push_back(std::move(ar));
    }
  }
  if (isolated) {
    add_finish_time_fairness(result, cluster, catalog, workload_in, with_store, &*isolated);
  }
  result.summary = summarize(result, opts.reference);
  return result;
}

}  // namespace sia
