#include "sim/simulator.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/compat.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "os/atomic_file.hpp"
#include "os/clock.hpp"
#include "place/placer_quirks.hpp"
#include "round/app_phase.hpp"
#include "round/previous.hpp"
#include "round/round_driver.hpp"
#include "round/schedule_pass.hpp"
#include "sim/deadlines.hpp"
#include "sim/fairness.hpp"
#include "sim/ground_truth.hpp"
#include "sim/round_files.hpp"
#include "sim/searches.hpp"
#include "sim/sim_apps.hpp"
#include "sim/sim_job.hpp"
#include "sim/sim_quirks.hpp"
#include "sim/sim_reservations.hpp"
#include "sim/sim_results.hpp"

namespace sia {

namespace {

std::vector<int> shape_of(const JobPlacement& jp) {
  std::vector<int> s;
  for (const auto& ng : jp.nodes) s.push_back(static_cast<int>(ng.gpus.size()));
  return s;
}

// Same nodes with the same GPU counts; with `indices`, the same GPU indices too (a job
// moved to other GPUs must restart).
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

// SimQuirks::spread_past_profiled_nodes: the GPUs spread evenly over `max_nodes` nodes.
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

// One simulation: the round (round/round_driver.hpp) on simulated time, its decisions
// reaching the jobs through SimJob::apply.
class Simulation : private RoundWorld {
 public:
  Simulation(const Cluster& cluster, const Catalog& catalog, const std::vector<JobSpec>& workload,
             const SimOptions& options);
  bool over() const { return done_ >= total() || (opts_.horizon > 0 && now_ >= opts_.horizon); }
  void round() { run_round(*this); }
  SimResult results();

 private:
  // The round's steps (round/round_driver.hpp).
  void collect() override;
  void app_phases() override;
  Census census() override;
  void schedule(const Census& c) override;
  void book_fairness(const Census& c) override;
  void deliver(const Census& c) override;
  void close(const Census& c) override;

  int total() const { return static_cast<int>(jobs_.size()); }
  void make_jobs(TruthStore& store);
  void release(int i);
  void deliver_job(int i, const Placement& place_now, const Allocation& alloc);
  void account(const Census& c, RoundRecord& rec);
  void check_time(const Census& c) const;
  void adjust_row(int i, JobState& view, GoodputRow& row);

  SimOptions opts_;
  Compat profile_;  // opts_.compat
  SimQuirks quirks_;
  const Cluster& cluster_;
  const Catalog& catalog_;
  const std::vector<JobSpec>& workload_in_;
  std::vector<JobSpec> workload_;  // "+TJ" baselines: tuned jobs rigid
  Estimator est_;
  std::unique_ptr<Policy> policy_;
  bool true_rates_ = false;
  std::shared_ptr<TruthStore> store_;
  std::vector<SimJob> jobs_;
  std::vector<SimApp> apps_;
  std::vector<int> app_of_;
  std::vector<std::string> stop_reason_;
  // At its phase's budget, waiting for the others (GPUs released; a trial released here is
  // not active that round, so the next placement starts it afresh).
  std::vector<char> held_;
  std::vector<double> alloc_gpu_seconds_, queued_;
  std::map<std::string, Config> decided_;
  std::optional<Allocation> prev_alloc_;
  std::optional<Placement> prev_place_;
  // The round in progress: which jobs had ended before it, its record, its decision.
  std::vector<char> was_done_;
  RoundRecord rec_;
  std::optional<Allocation> alloc_now_;
  std::optional<Placement> place_now_;
  std::unique_ptr<RoundFiles> files_;
  SimOptions with_store_;
  std::optional<IsolatedRuns> isolated_;
  std::unique_ptr<SimDeadlines> deadlines_;      // when the workload has deadlines
  std::optional<SimReservations> reservations_;  // when SimOptions::reservations is set
  SimResult result_;
  double now_ = 0;
  int done_ = 0, round_no_ = 0;
};

SimOptions resolved(SimOptions opts) {
  if (opts.round == 0) opts.round = default_round(opts.policy);
  if (!(opts.round > 0)) throw Error(ExitStatus::usage, "--round: must be > 0 seconds");
  return opts;
}

EstimatorOptions sim_estimator_options(const SimOptions& opts, Compat profile, const SimQuirks& q) {
  EstimatorOptions eo = estimator_options(profile);
  eo.cap_profiled_nodes = true;  // the ground truth ends where the measurements end
  if (!q.no_profile_store) eo.profile_store = opts.profile_store;
  apply_profiling(eo, opts.profiling);
  eo.baseline_info = opts.policy != "sia";
  return eo;
}

Simulation::Simulation(const Cluster& cluster, const Catalog& catalog,
                       const std::vector<JobSpec>& workload, const SimOptions& options)
    : opts_(resolved(options)),
      profile_(opts_.compat),
      quirks_(sim_quirks(profile_)),
      cluster_(cluster),
      catalog_(catalog),
      workload_in_(workload),
      workload_(workload),
      est_(cluster, catalog, sim_estimator_options(opts_, profile_, quirks_)) {
  PolicyOptions po = opts_.policy_options;
  po.quirks = policy_quirks(profile_);
  po.round = opts_.round;
  po.wall_clock = false;  // the work limits alone: the same answers on any machine, any load
  policy_ = make_policy(opts_.policy, po);
  true_rates_ = quirks_.true_rates_for_baselines && reads_true_rates(opts_.policy);
  // Baselines "+TJ" run every job at its tuned GPU count and batch.
  if (uses_tuned_jobs(opts_.policy)) {
    for (auto& s : workload_) {
      if (s.gpus > 0 && s.batch_size > 0) s.adaptivity = Adaptivity::rigid;
    }
  }
  store_ = opts_.truths ? opts_.truths : std::make_shared<TruthStore>();
  make_jobs(*store_);
  apps_ = group_apps(workload_, opts_.apps, app_of_);
  if (has_deadlines(workload_)) {
    deadlines_ = std::make_unique<SimDeadlines>(workload_, cluster, catalog, opts_.policy == "sia",
                                                opts_.reservations);
  }
  stop_reason_.resize(jobs_.size());
  held_.assign(jobs_.size(), 0);
  alloc_gpu_seconds_.assign(jobs_.size(), 0.0);
  queued_.assign(jobs_.size(), 0.0);
  result_.cluster = cluster.name;
  result_.policy = opts_.policy;
  result_.profile = compat_name(profile_);
  result_.round = opts_.round;
  for (const auto& t : cluster.types) result_.gpu_types.push_back(t.name);
  if (!opts_.save_rounds_dir.empty()) {
    files_ =
        std::make_unique<RoundFiles>(opts_.save_rounds_dir, cluster, result_.profile, opts_.policy);
  }
  // Finish-time fairness: a job's isolated runs start on other cores as soon as it has
  // finished (its contention is final then), while this simulation goes on; a long job's
  // are also made ahead (IsolatedRuns::speculate).
  if (opts_.reservations) {
    reservations_.emplace(*opts_.reservations, cluster);
    result_.reservations = true;
  }
  with_store_ = opts_;
  with_store_.truths = store_;
  with_store_.reservations.reset();
  if (opts_.fairness && opts_.horizon == 0) {
    isolated_.emplace(cluster, catalog, workload_in_, with_store_);
  }
}

void Simulation::make_jobs(TruthStore& store) {
  jobs_.reserve(workload_.size());
  for (const auto& spec : workload_) {
    if (spec.model.empty()) {
      throw Error(ExitStatus::data, "job " + spec.name + ": the simulator needs a catalog model");
    }
    const ModelInfo& m = catalog_.get(spec.model, "job " + spec.name);
    for (const auto& g : m.gpus) {
      if (g.pipeline_stages > 1) {
        throw Error(ExitStatus::data, "job " + spec.name + ": model " + m.name +
                                          " is pipeline-parallel; the simulator has no ground "
                                          "truth for pipelines");
      }
    }
    std::vector<GroundTruth*> per_type;
    for (const auto& t : cluster_.types) per_type.push_back(store.truth(m, t.name));
    JobState js;
    js.spec = spec;
    double cost = spec.restart_cost >= 0 ? spec.restart_cost : m.restart_cost;
    jobs_.emplace_back(std::move(js), m, per_type, store.validation(m), cluster_, cost,
                       sim_job_quirks(profile_));
  }
}

// The clock: every job trains for a round (a trial no further than its phase's budget),
// and the profile store learns what the running jobs measured (estimator.hpp).
void Simulation::collect() {
  was_done_.assign(jobs_.size(), 0);
  for (int i = 0; i < total(); ++i) was_done_[i] = jobs_[i].completed();
  for (const auto& app : apps_) {
    for (std::size_t t = 0; t < app.trials.size(); ++t) {
      jobs_[app.trials[t]].set_limit(app.brackets[app.bracket[t]].budget());
    }
  }
  for (auto& j : jobs_) j.step(opts_.round, est_);
  for (const auto& j : jobs_) {
    if (!j.placement().empty()) est_.record(j.state());
  }
  now_ += opts_.round;
  ++round_no_;
  rec_ = RoundRecord{};
  rec_.t = now_;
  rec_.gpus.assign(cluster_.types.size(), 0);
}

// Frees job i's GPUs now (a decision reaching the job outside the scheduling pass).
void Simulation::release(int i) {
  jobs_[i].apply(-1, {}, false, est_);
  decided_.erase(jobs_[i].name());
}

// The app schedulers' step, per bracket: a trial at its phase's budget waits (its GPUs
// freed) until every trial of the phase is there; then the worse ones stop, freed now.
void Simulation::app_phases() {
  for (auto& app : apps_) {
    for (std::size_t k = 0; k < app.brackets.size(); ++k) {
      std::vector<TrialProgress> live;
      std::vector<int> alive;
      for (std::size_t t = 0; t < app.trials.size(); ++t) {
        const int i = app.trials[t];
        if (app.bracket[t] != static_cast<int>(k) || jobs_[i].completed()) continue;
        const double f = jobs_[i].fraction();
        live.push_back({jobs_[i].name(), f, simulated_loss(workload_[i], f)});
        alive.push_back(i);
      }
      const PhaseStep step = step_phase(app.brackets[k], live);
      if (!step.closed) {
        for (std::size_t s : step.at_budget) {
          if (held_[alive[s]]) continue;
          held_[alive[s]] = 1;
          release(alive[s]);
        }
        continue;
      }
      for (int i : alive) held_[i] = 0;
      for (const auto& st : step.stops) {
        for (int i : alive) {
          if (jobs_[i].name() != st.name) continue;
          release(i);
          jobs_[i].stop(now_);
          stop_reason_[i] = st.reason;
        }
      }
    }
  }
}

// Who is active this round: submitted, not ended, not waiting at its app's rung.
Census Simulation::census() {
  std::vector<CensusEntry> entries(jobs_.size());
  for (int i = 0; i < total(); ++i) {
    const bool ended = jobs_[i].completed();
    entries[i] = {ended, ended && !was_done_[i], jobs_[i].submission_time() <= now_, held_[i] != 0,
                  app_of_[i]};
  }
  Census c = take_census(entries, static_cast<int>(apps_.size()));
  done_ = c.ended;
  rec_.active = static_cast<int>(c.active.size());
  if (deadlines_) {
    for (int i : c.finished_now) deadlines_->ended(i);
  }
  return c;
}

// A job's row as the round sees it: the true rates for the baselines that read them, then
// the deadline tier's admission and marks. A guaranteed job refused on its first row (one
// without the scale-up rule, model/estimator.hpp) is best-effort from then on, and its
// row estimated again as one.
void Simulation::adjust_row(int i, JobState& view, GoodputRow& row) {
  if (true_rates_) jobs_[i].show_true_rates(row);
  if (!deadlines_) return;
  if (deadlines_->refused_now(i, now_, row)) {
    view.spec.job_class = JobClass::best_effort;
    view.estimated.reset();
    row = est_.estimate_job(view);
    if (true_rates_) jobs_[i].show_true_rates(row);
  }
  deadlines_->adjust(i, now_, row);
}

// The scheduling pass (round/schedule_pass.hpp) on the active jobs' scheduler views, the
// previous decisions kept for them only.
void Simulation::schedule(const Census& c) {
  alloc_now_.reset();
  place_now_.reset();
  RoundRecord& rec = rec_;
  std::set<std::string> scheduled;
  for (int i : c.active) scheduled.insert(jobs_[i].name());
  // With reservations: the round's cluster lacks the nodes they hold.
  std::optional<LendingRound> lending;
  if (reservations_) {
    lending = reservations_->round(now_, prev_place_, scheduled);
    rec.lent_gpus = lending->lent_gpus;
    rec.take_backs = lending->take_backs;
    rec.taken_back_gpus = lending->taken_back_gpus;
  }
  const Cluster& cluster = lending ? lending->cluster : cluster_;
  const std::optional<Placement>& previous_place = lending ? lending->previous : prev_place_;
  if (c.active.empty()) return;
  const double estimate_start = os::now_seconds();
  std::vector<JobState*> views;
  std::map<std::string, AppRef> app_refs;
  for (int i : c.active) {
    auto d = decided_.find(jobs_[i].name());
    views.push_back(&jobs_[i].scheduler_view(
        now_, d == decided_.end() ? std::optional<Config>() : std::optional<Config>(d->second)));
    if (!workload_[i].app.empty()) app_refs[jobs_[i].name()] = trial_ref(apps_[app_of_[i]], i);
  }
  const GoodputMatrix m = estimate_round(
      est_, cluster, result_.profile, views, app_refs, nullptr,
      [&](std::size_t k, GoodputRow& row) { adjust_row(c.active[k], *views[k], row); });
  prev_alloc_ = previous_for(prev_alloc_, scheduled);
  const double t0 = os::now_seconds();
  Allocation alloc = solve_round(*policy_, m, prev_alloc_);
  const double t1 = os::now_seconds();
  rec.policy_runtime = t1 - t0;
  result_.policy_runtimes.push_back(rec.policy_runtime);
  result_.round_runtimes.push_back(t1 - estimate_start);
  Placement place_now = place_round(alloc, cluster, previous_place, placer_quirks(profile_));
  if (files_) files_->save(round_no_, now_, views, est_, m, alloc, place_now);
  alloc_now_ = std::move(alloc);
  place_now_ = std::move(place_now);
}

// The apps active count the round's contention, the jobs scheduled theirs; a job that has
// just finished hands its isolated runs to the fairness workers, and a long job's would
// start last, when it finishes: idle workers run the ones its contention so far points to
// ahead (asked every 10 rounds, after 30).
void Simulation::book_fairness(const Census& c) {
  for (int i : c.finished_now) {
    if (isolated_ && !jobs_[i].stopped()) {
      isolated_->add_job(workload_in_[i], jobs_[i].mean_contention());
    }
  }
  for (std::size_t a = 0; a < apps_.size(); ++a) {
    if (c.unit_active[a]) apps_[a].contention.count(c.active_units);
  }
  if (!place_now_) return;
  for (int i : c.active) jobs_[i].contention().push_back(c.active_units);
  for (int i : c.active) {
    const std::size_t rounds = jobs_[i].contention().size();
    if (isolated_ && workload_in_[i].app.empty() && rounds >= 30 && rounds % 10 == 0) {
      isolated_->speculate(workload_in_[i], jobs_[i].mean_contention());
    }
  }
}

// The round's decision reaches the jobs it scheduled; it is the previous one next round.
void Simulation::deliver(const Census& c) {
  if (!place_now_) return;
  for (int i : c.active) deliver_job(i, *place_now_, *alloc_now_);
  prev_alloc_ = std::move(alloc_now_);
  prev_place_ = std::move(place_now_);
  alloc_now_.reset();
  place_now_.reset();
}

void Simulation::close(const Census& c) {
  account(c, rec_);
  result_.rounds.push_back(std::move(rec_));
  if (opts_.progress) opts_.progress(now_, done_, total());
  check_time(c);
}

// How a decision reaches a simulated job: a new placement applied (restarting it when it
// moved), and what it was given kept for its next scheduler view.
void Simulation::deliver_job(int i, const Placement& place_now, const Allocation& alloc) {
  SimJob& job = jobs_[i];
  const JobPlacement* now_p = place_now.find(job.name());
  const JobPlacement* before = prev_place_ ? prev_place_->find(job.name()) : nullptr;
  if (!same_nodes(now_p, before, !quirks_.moves_by_node_only)) {
    if (now_p) {
      std::vector<int> shape = shape_of(*now_p);
      bool restart = now_p->restart;
      if (quirks_.spread_past_profiled_nodes) {
        const ModelGpu* g =
            catalog_.get(job.state().spec.model).gpu(cluster_.types[now_p->type].name);
        shape = physical_fix(shape, g ? g->max_profiled_nodes : 0);
      }
      if (quirks_.restart_on_shape_change) {
        restart = now_p->type != job.type() || shape != job.placement();
      }
      job.apply(now_p->type, shape, restart, est_);
    } else {
      job.apply(-1, {}, false, est_);
    }
  }
  if (const JobAllocation* ja = alloc.find(job.name()); ja && ja->config && now_p) {
    decided_[job.name()] = *ja->config;
  } else {
    decided_.erase(job.name());
  }
}

// The round's accounting: queueing, GPUs held, and the round record.
void Simulation::account(const Census& c, RoundRecord& rec) {
  for (int i : c.active) {
    if (jobs_[i].placement().empty()) {
      queued_[i] += opts_.round;
    } else {
      ++rec.running;
      alloc_gpu_seconds_[i] += jobs_[i].gpus() * opts_.round;
      if (jobs_[i].type() >= 0) rec.gpus[jobs_[i].type()] += jobs_[i].gpus();
    }
  }
  if (!opts_.record_rounds) return;
  std::vector<int> shown = c.finished_now;  // jobs that finished this round, then active ones
  shown.insert(shown.end(), c.active.begin(), c.active.end());
  for (int i : shown) {
    const SimJob& j = jobs_[i];
    rec.jobs.push_back({j.name(), j.type(), j.placement(), j.batch_size(), j.accum_steps(),
                        j.epoch(), j.progress(), j.restarts(), j.completion_time()});
  }
}

void Simulation::check_time(const Census& c) const {
  if (!(now_ > opts_.max_time && done_ < total())) return;
  std::string stuck;
  for (int i : c.active) {
    if (stuck.size() > 200) break;
    stuck += (stuck.empty() ? "" : ", ") + jobs_[i].name();
  }
  char days[32];
  std::snprintf(days, sizeof days, "%g", opts_.max_time / 86400);
  throw Error(ExitStatus::data, std::string("simulation passed ") + days +
                                    " days with jobs unfinished (" + stuck +
                                    "): can the cluster run them at all?");
}

SimResult Simulation::results() {
  SimResult result = std::move(result_);
  std::vector<int> result_at(jobs_.size(), -1);  // a job's index in result.jobs
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const SimJob& j = jobs_[i];
    if (!j.completion_time()) continue;  // past the horizon
    result_at[i] = static_cast<int>(result.jobs.size());
    JobResult r = job_result(j, workload_[i].app, stop_reason_[i], queued_[i]);
    if (deadlines_) deadlines_->annotate(static_cast<int>(i), r);
    if (quirks_.whole_round_gpu_seconds) {
      r.gpu_seconds = whole_round_gpu_seconds(j, alloc_gpu_seconds_[i]);
    }
    result.jobs.push_back(std::move(r));
  }
  const bool has_apps = std::any_of(workload_.begin(), workload_.end(),
                                    [](const JobSpec& s) { return !s.app.empty(); });
  if (has_apps) add_app_results(result, apps_, workload_, result_at);
  if (isolated_) {
    add_finish_time_fairness(result, cluster_, catalog_, workload_in_, with_store_, &*isolated_);
  }
  result.summary = summarize(result, quirks_);
  return result;
}

}  // namespace

SimResult simulate(const Cluster& cluster, const Catalog& catalog,
                   const std::vector<JobSpec>& workload, const SimOptions& options) {
  Simulation sim(cluster, catalog, workload, options);
  while (!sim.over()) sim.round();
  return sim.results();
}

}  // namespace sia
