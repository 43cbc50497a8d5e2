#include "model/estimator.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>

#include "core/error.hpp"
#include "model/fit.hpp"

namespace sia {

EstimatorOptions estimator_options(Compat compat) {
  EstimatorOptions o;
  o.compat = compat;
  o.quirks = estimator_quirks(compat);
  if (compat == Compat::reference) {
    o.seed_profiles = false;
    o.limits.max_gpus = 64;
    o.cap_profiled_nodes = true;
  } else {
    o.profile_store = kDefaultProfileStore;
  }
  return o;
}

Profiling parse_profiling(const std::string& name) {
  if (name == "none") return Profiling::none;
  if (name == "bootstrap") return Profiling::bootstrap;
  if (name == "oracle") return Profiling::oracle;
  throw Error(ExitStatus::usage,
              "--profiling: expected none, bootstrap or oracle, got \"" + name + "\"");
}

void apply_profiling(EstimatorOptions& options, Profiling p) {
  if (p == Profiling::none) {
    options.seed_profiles = false;
    options.project = false;
    options.profile_store = ProfileStore::off;
  } else if (p == Profiling::oracle) {
    options.oracle_profiles = true;
  }
}

namespace {

// The measurements as the fit takes them (compute time: step time less sync time).
std::vector<FitPoint> fit_points(const std::vector<ProfilePoint>& pts) {
  std::vector<FitPoint> fit;
  fit.reserve(pts.size());
  for (const auto& p : pts) {
    fit.push_back({p.nodes, p.replicas, static_cast<double>(p.local_bsz),
                   std::max(p.step_time - p.sync_time, 1e-9), p.step_time});
  }
  return fit;
}

int max_observed_replicas(const JobState& job, const std::string& type) {
  int r = 0;
  for (const auto& o : job.observations) {
    if (type.empty() || o.gpu_type == type) r = std::max(r, o.replicas);
  }
  return r;
}

// The single-GPU throughput of a type's model at its largest local batch.
double single_gpu_throughput_at_max(const TypeModel& tm) {
  return tm.max_local / iteration_time(tm.params, 1, 1, tm.max_local, 0);
}

}  // namespace

namespace {

std::uint64_t next_estimator_id() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

}  // namespace

Estimator::Estimator(const Cluster& cluster, const Catalog& catalog, EstimatorOptions options)
    : cluster_(cluster), catalog_(catalog), options_(options), id_(next_estimator_id()) {
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) {
    configs_.push_back(configs_for_type(static_cast<int>(t), cluster_.types[t].gpus_per_node,
                                        cluster_.types[t].node_count, options_.limits));
  }
}

const ModelInfo* Estimator::model_of(const JobState& job) const {
  if (job.spec.model.empty()) return nullptr;
  if (const ModelInfo* m = catalog_.loaded(job.spec.model)) return m;
  return &catalog_.get(job.spec.model, job.where("model"));
}

double Estimator::init_batch_size(const JobState& job) const {
  if (job.spec.init_batch_size > 0) return job.spec.init_batch_size;
  if (const ModelInfo* m = model_of(job)) return m->init_batch_size;
  throw Error(ExitStatus::data, job.where("init_batch_size") +
                                    ": missing (the job names no catalog model to take it from)");
}

double Estimator::max_batch_size(const JobState& job) const {
  if (job.spec.max_batch_size > 0) return job.spec.max_batch_size;
  if (const ModelInfo* m = model_of(job)) return m->max_batch_size;
  return init_batch_size(job);
}

double Estimator::restart_penalty(const JobState& job) const {
  if (job.spec.restart_cost >= 0) return job.spec.restart_cost;
  if (!job.spec.model.empty() && catalog_.has(job.spec.model)) {
    const ModelInfo& m = catalog_.get(job.spec.model);
    return options_.quirks.catalog_restart_penalty ? m.restart_penalty : m.restart_cost;
  }
  return 30;
}

void Estimator::record(const JobState& job) {
  if (options_.profile_store == ProfileStore::off) return;
  if (job.observations_version != 0) {
    auto [it, fresh] = recorded_.try_emplace(job.spec.name, job.observations_version);
    if (!fresh && it->second == job.observations_version) return;  // seen already
    it->second = job.observations_version;
  }
  add_shared(job.spec.model, job.observations);
}

void Estimator::share(const Profile& profile) {
  add_shared(profile.model, profile.points);
}

void Estimator::add_shared(const std::string& model, const std::vector<ProfilePoint>& points) {
  if (options_.profile_store == ProfileStore::off || model.empty() || points.empty()) return;
  SharedProfile& shared = store_[model];
  for (const auto& o : points) {
    if (shared.shapes.emplace(o.gpu_type, o.nodes, o.replicas, o.local_bsz).second) {
      SharedProfile::OfType& of = shared.types[o.gpu_type];
      of.points.push_back(shared.points.size());
      of.max_replicas = std::max(of.max_replicas, o.replicas);
      shared.points.push_back(o);
      ++store_generation_;
    }
  }
}

std::size_t Estimator::store_generation(const std::string& model, const std::string& type) const {
  auto shared = store_.find(model);
  if (shared == store_.end()) return 0;
  auto of = shared->second.types.find(type);
  return of == shared->second.types.end() ? 0 : of->second.points.size();
}

std::size_t Estimator::store_generation(const std::string& model) const {
  auto shared = store_.find(model);
  return shared == store_.end() ? 0 : shared->second.points.size();
}

std::vector<Profile> Estimator::shared_profiles() const {
  std::vector<Profile> out;
  for (const auto& [model, shared] : store_) {
    Profile p;
    p.model = model;
    p.points = shared.points;
    out.push_back(std::move(p));
  }
  return out;
}

TypeModel Estimator::type_model(JobState& job, std::size_t t, bool with_seed) {
  const bool seeded = with_seed || options_.seed_profiles;
  const std::string& type = cluster_.types[t].name;
  const std::string cache_key = seeded && !options_.seed_profiles ? type + "+seed" : type;
  if (job.observations_version == 0) return resolve_type_model(job, t, seeded, cache_key);
  const std::size_t generation = store_generation(job.spec.model, type);
  // Observations are only appended (job_state.hpp): while this type has as many, they are
  // the ones resolved, whatever other types measured since.
  std::size_t own = 0;
  for (const auto& o : job.observations) own += o.gpu_type == type;
  auto memo = job.resolved.find(cache_key);
  if (memo != job.resolved.end() && memo->second.type_observations == own &&
      memo->second.estimator == id_ && memo->second.store_generation == generation) {
    memo->second.observations_version = job.observations_version;
    return memo->second.model;
  }
  TypeModel tm = resolve_type_model(job, t, seeded, cache_key);
  job.resolved[cache_key] = ResolvedTypeModel{job.observations_version, own, id_, generation, tm};
  return tm;
}

TypeModel Estimator::resolve_type_model(JobState& job, std::size_t t, bool seeded,
                                        const std::string& cache_key) {
  const ModelInfo* info = model_of(job);
  TypeModel tm;
  const std::string& type = cluster_.types[t].name;
  if (!job.spec.allows_type(type)) return tm;
  const ModelGpu* g = info ? info->gpu(type) : nullptr;
  std::vector<ProfilePoint> pts;
  const bool oracle = options_.oracle_profiles && g;
  if (oracle) {
    for (const auto& r : g->placements) {
      pts.push_back({type, r.nodes, r.replicas, r.local_bsz, r.step_time, r.sync_time});
    }
  } else if (seeded) {
    if (job.spec.profile) {
      for (const auto& p : job.spec.profile->points) {
        if (p.gpu_type == type) pts.push_back(p);
      }
    } else if (g) {
      int stages = std::max(1, g->pipeline_stages);
      for (const auto& r : g->placements) {
        if (r.nodes == 1 && r.replicas == stages) {
          pts.push_back({type, 1, 1, r.local_bsz, r.step_time, r.sync_time});
        }
      }
    }
  }
  for (const auto& o : job.observations) {
    if (o.gpu_type == type) pts.push_back(o);
  }
  const SharedProfile* shared = nullptr;  // the store's points of this model and type
  const SharedProfile::OfType* of_type = nullptr;
  if (auto it = store_.find(job.spec.model); it != store_.end() && !oracle) {
    if (auto of = it->second.types.find(type); of != it->second.types.end()) {
      shared = &it->second;
      of_type = &of->second;
    }
  }
  if (of_type) {
    const std::size_t own = pts.size();
    // Every point here is of `type`: a shape is its nodes, replicas and local batch.
    using Shape = std::tuple<int, int, int>;
    std::vector<Shape> mine;
    mine.reserve(own);
    for (const auto& q : pts) mine.emplace_back(q.nodes, q.replicas, q.local_bsz);
    std::sort(mine.begin(), mine.end());
    for (std::size_t i : of_type->points) {
      const ProfilePoint& p = shared->points[i];
      if (!std::binary_search(mine.begin(), mine.end(), Shape{p.nodes, p.replicas, p.local_bsz})) {
        pts.push_back(p);
      }
    }
    // With shared points the fit's input is put in one order (a set of measurements), so
    // the jobs of a model that measured the same share one memoised fit (model/fit.hpp).
    if (pts.size() > own) {
      std::sort(pts.begin(), pts.end(), [](const ProfilePoint& a, const ProfilePoint& b) {
        return std::tie(a.nodes, a.replicas, a.local_bsz, a.step_time, a.sync_time) <
               std::tie(b.nodes, b.replicas, b.local_bsz, b.step_time, b.sync_time);
      });
    }
  }
  if (g) {
    tm.min_local = g->min_local_bsz;
    tm.max_local = g->max_local_bsz;
    tm.stages = std::max(1, g->pipeline_stages);
    tm.single_gpu_throughput = g->single_gpu_throughput();
    tm.usable = true;
  } else if (!pts.empty()) {
    tm.min_local = INT32_MAX;
    tm.max_local = 0;
    for (const auto& p : pts) {
      tm.min_local = std::min(tm.min_local, p.local_bsz);
      tm.max_local = std::max(tm.max_local, p.local_bsz);
    }
    tm.usable = true;
  }
  if (job.spec.pipeline_stages > 0) tm.stages = job.spec.pipeline_stages;
  if (!tm.usable) return tm;
  tm.points = static_cast<int>(pts.size());
  for (const auto& p : pts) tm.multi_gpu |= p.replicas > 1;
  if (pts.empty()) return tm;
  tm.has_model = true;
  const std::uint64_t print = fingerprint_points(pts);
  auto cached = job.models.find(cache_key);
  if (cached != job.models.end() && cached->second.points == tm.points &&
      cached->second.fingerprint == print) {
    tm.params = cached->second.params;
  } else {
    tm.params = fit_perf_params(fit_points(pts));
    job.models[cache_key] = FittedModel{tm.params, tm.points, print};
  }
  if (!g) {
    // Own profile: the single-GPU throughput at the largest measured batch.
    tm.single_gpu_throughput = single_gpu_throughput_at_max(tm);
  }
  return tm;
}

std::vector<TypeModel> Estimator::type_models(JobState& job) {
  std::vector<TypeModel> out(cluster_.types.size());
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) out[t] = type_model(job, t);
  return out;
}

struct Estimator::JobView {
  explicit JobView(JobState& j) : job(j), spec(j.spec) {}

  JobState& job;
  const JobSpec& spec;
  const ModelInfo* info = nullptr;
  double b0 = 0;    // initial global batch
  double bmax = 0;  // max global batch (at least b0)
  std::vector<TypeModel> tms;
  std::optional<GradientStats> gradient;
  std::vector<bool> own;   // types valued with a model of their own, in the profile's sense
  bool any_multi = false;  // some own type has multi-GPU measurements
  int src = -1;            // the type projections start from; -1: none
  std::vector<int> min_rep, max_rep;  // replica bounds per type (GPUs / stages)
  std::optional<Config> current;      // the row's current configuration
  // The source type's best batch per replica count, for projections: every configuration
  // of that many replicas on any projected type starts from the same one.
  mutable std::map<int, BatchChoice> on_source;

  BatchLimits limits(std::size_t t, const EstimatorQuirks& q) const {
    BatchLimits l;
    l.min_local = tms[t].min_local;
    l.max_local = tms[t].max_local;
    l.tune = spec.adaptivity == Adaptivity::adaptive;
    if (l.tune) {
      l.max_batch = q.workload_batch_cap && spec.batch_size > 0 ? spec.batch_size : bmax;
    } else {
      l.max_batch = spec.batch_size;
    }
    return l;
  }
  GoodputFunction function(std::size_t t) const {
    return GoodputFunction(tms[t].params, gradient, b0, tms[t].stages);
  }
};

void Estimator::refresh_row(const JobState& job, const ModelInfo* info, GoodputRow& row) const {
  const JobSpec& spec = job.spec;
  row.job = spec.name;
  row.adaptivity = spec.adaptivity;
  row.priority = spec.priority;
  row.age = job.age;
  row.restarts = job.restarts;
  row.restart_penalty = restart_penalty(job);
  row.attained_service = job.attained_service;
  row.preemptible = spec.preemptible;
  row.restoring = job.restoring;
  row.current.reset();
  if (job.current) {
    // A current allocation that cannot exist on this cluster (a type it lacks, or more
    // nodes or GPUs than the type has) is treated as none.
    int t = cluster_.type_index(job.current->gpu_type);
    if (t >= 0) {
      Config c{t, job.current->nodes(), job.current->gpus()};
      const GpuType& gt = cluster_.types[t];
      if (c.nodes >= 1 && c.nodes <= gt.node_count && c.gpus >= c.nodes &&
          c.gpus <= c.nodes * gt.gpus_per_node) {
        row.current = c;
      }
    }
  }
  // How far the job is.
  const double total =
      job.target_progress > 0 ? job.target_progress : (info ? info->target_progress() : 0.0);
  row.progress.reset();
  if (total > 0) row.progress = JobProgress{job.progress, total};
}

Estimator::JobView Estimator::resolve(JobState& job) {
  const EstimatorQuirks& q = options_.quirks;
  JobView v(job);
  v.info = model_of(job);
  v.b0 = init_batch_size(job);
  v.bmax = std::max(v.b0, max_batch_size(job));
  v.tms = type_models(job);
  v.gradient = job.gradient;
  if (!v.gradient && job.spec.profile) v.gradient = job.spec.profile->gradient;
  const std::size_t ntypes = v.tms.size();
  // Which types have a usable model, in the sense of the active profile.
  v.own.assign(ntypes, false);
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!v.tms[t].usable || !v.tms[t].has_model) continue;
    v.own[t] = options_.oracle_profiles || !q.models_only_from_running ||
               (v.gradient && max_observed_replicas(job, cluster_.types[t].name) > 0);
  }
  for (std::size_t t = 0; t < ntypes; ++t) v.any_multi |= v.own[t] && v.tms[t].multi_gpu;
  // The source type for projections.
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!v.own[t]) continue;
    if (q.first_projection_source) {
      v.src = static_cast<int>(t);
      break;
    }
    if (!v.tms[t].multi_gpu) continue;
    if (v.src < 0 || v.tms[t].points > v.tms[v.src].points) v.src = static_cast<int>(t);
  }
  return v;
}

void Estimator::replica_bounds(JobView& v, GoodputRow& row) const {
  const EstimatorQuirks& q = options_.quirks;
  const JobSpec& spec = v.spec;
  const std::vector<TypeModel>& tms = v.tms;
  const std::size_t ntypes = tms.size();
  // The most replicas (GPUs / stages) the job was observed with, on one type or on any.
  auto observed = [&](const std::string& type) {
    int r = 0;
    for (const auto& o : v.job.observations) {
      if (!type.empty() && o.gpu_type != type) continue;
      int t = cluster_.type_index(o.gpu_type);
      int stages = t >= 0 ? tms[t].stages : 1;
      r = std::max(r, o.replicas / std::max(1, stages));
    }
    if (options_.profile_store == ProfileStore::scale_up) {
      if (auto shared = store_.find(spec.model); shared != store_.end()) {
        // Whole replicas of the pipeline: the most points of a type had, divided.
        for (const auto& [name, of] : shared->second.types) {
          if (!type.empty() && name != type) continue;
          int t = cluster_.type_index(name);
          r = std::max(r, of.max_replicas / std::max(1, t >= 0 ? tms[t].stages : 1));
        }
      }
    }
    return r;
  };
  const bool observed_anywhere = options_.share_max_replicas && !q.scale_up_per_type;
  const bool guaranteed = spec.job_class == JobClass::guaranteed && spec.deadline;
  v.min_rep.assign(ntypes, 1);
  v.max_rep.assign(ntypes, 1);
  std::vector<int> cap(ntypes, 1);
  int shared = 1;
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable) continue;
    const std::string& type = cluster_.types[t].name;
    const int u = tms[t].stages;
    const double batch_cap = q.catalog_batch_cap && v.info ? v.info->max_batch_size : v.bmax;
    cap[t] = std::max(1, static_cast<int>(std::floor(batch_cap / tms[t].min_local + 1e-9)));
    if (q.max_replicas_per_type > 0) cap[t] = std::min(cap[t], q.max_replicas_per_type);
    int grow = std::max(options_.scale_up * observed(observed_anywhere ? "" : type), 1);
    if (guaranteed) grow = cap[t];  // not held back by a rule meant for best-effort jobs
    if (q.scale_up_per_type) grow = std::min(grow, cap[t]);  // cap per type, then share
    v.max_rep[t] = grow;
    shared = std::max(shared, grow);
    v.min_rep[t] = std::max(1, (spec.min_gpus + u - 1) / u);
  }
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable) continue;
    const int u = tms[t].stages;
    int& max_rep = v.max_rep[t];
    if (options_.share_max_replicas) max_rep = shared;
    if (!q.scale_up_per_type) max_rep = std::min(max_rep, cap[t]);
    if (spec.max_gpus) max_rep = std::min(max_rep, std::max(1, spec.max_gpus / u));
    if (spec.adaptivity != Adaptivity::adaptive && spec.gpus > 0) {
      max_rep = std::max(1, spec.gpus / u);
    }
    // A job that needs at least N GPUs starts at N, whatever it was observed with.
    max_rep = std::max(max_rep, v.min_rep[t]);
  }
  row.min_gpus = std::max(1, spec.min_gpus);
  row.max_gpus = 1;
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (tms[t].usable) row.max_gpus = std::max(row.max_gpus, v.max_rep[t] * tms[t].stages);
  }
  if (spec.adaptivity == Adaptivity::rigid) row.min_gpus = row.max_gpus = spec.gpus;
}

Estimator::Valuation Estimator::valuation(const JobView& v, std::size_t t, double* ratio) const {
  const EstimatorQuirks& q = options_.quirks;
  const std::vector<TypeModel>& tms = v.tms;
  *ratio = 1;
  const bool own = v.own[t];
  if (own && (q.own_model_always || tms[t].multi_gpu || !v.any_multi)) return Valuation::own;
  if (!options_.project || v.src < 0 || v.src == static_cast<int>(t)) {
    return own ? Valuation::own : Valuation::none;
  }
  double xs = tms[v.src].single_gpu_throughput;
  double xt = tms[t].single_gpu_throughput;
  if (!q.catalog_throughput_ratio && own) {
    // Eq. 1 with the job's own single-GPU measurements on both types.
    xs = single_gpu_throughput_at_max(tms[v.src]);
    xt = single_gpu_throughput_at_max(tms[t]);
  }
  if (!(xs > 0) || !(xt > 0)) return Valuation::none;
  *ratio = xt / xs;
  return Valuation::project;
}

std::vector<Config> Estimator::candidate_configs(const JobView& v, std::size_t t) const {
  const JobSpec& spec = v.spec;
  const int u = v.tms[t].stages;
  std::vector<Config> out;
  if (spec.adaptivity == Adaptivity::rigid) {
    const int n = spec.gpus;
    const int gpn = cluster_.types[t].gpus_per_node;
    if (n <= cluster_.types[t].capacity()) {
      out.push_back(Config{static_cast<int>(t), (n + gpn - 1) / gpn, n});
    }
    return out;
  }
  int max_nodes = INT32_MAX;
  if (options_.cap_profiled_nodes && v.info) {
    if (const ModelGpu* g = v.info->gpu(cluster_.types[t].name)) {
      max_nodes = g->max_profiled_nodes;
    }
  }
  auto within = [&](const Config& c) {
    return c.gpus >= v.min_rep[t] * u && c.gpus <= v.max_rep[t] * u && (u == 1 || c.gpus % u == 0);
  };
  for (const Config& c : configs_[t]) {
    if (c.nodes <= max_nodes && within(c)) out.push_back(c);
  }
  // The configuration the job runs in, when a placer of its own (a [stages] place) put it
  // outside the set: valued too, so that keeping it is a choice with its goodput.
  if (v.current && v.current->type == static_cast<int>(t) && off_set(*v.current) &&
      within(*v.current)) {
    out.push_back(*v.current);
  }
  return out;
}

bool Estimator::off_set(const Config& c) const {
  const auto& set = configs_[static_cast<std::size_t>(c.type)];
  return std::find(set.begin(), set.end(), c) == set.end();
}

BatchChoice Estimator::projected_choice(const JobView& v, std::size_t t, const Config& c,
                                        double ratio) const {
  const std::size_t src = static_cast<std::size_t>(v.src);
  const int reps = c.gpus / v.tms[t].stages;
  const int us = v.tms[src].stages;
  const int gpn_s = cluster_.types[src].gpus_per_node;
  auto cached = v.on_source.find(reps);
  if (cached == v.on_source.end()) {
    const int nodes_s = (reps * us + gpn_s - 1) / gpn_s;
    cached =
        v.on_source
            .emplace(reps, v.function(src).optimize(nodes_s, reps, v.limits(src, options_.quirks)))
            .first;
  }
  BatchChoice bc = cached->second;
  bc.goodput *= ratio;
  bc.throughput *= ratio;
  // The batch the job would run on this type: same global batch, this type's memory.
  if (bc.valid() && v.tms[t].stages == 1) {
    int b = 0, s = 0;
    split_batch(bc.batch_size, reps, v.tms[t].max_local, v.b0, &b, &s);
    bc.local_bsz = b;
    bc.accum_steps = s;
    bc.batch_size = static_cast<double>(reps) * b * (s + 1);  // the batch it runs
  }
  return bc;
}

bool Estimator::value_type(const JobView& v, std::size_t t,
                           std::vector<GoodputEntry>& entries) const {
  double ratio = 1;
  const Valuation how = valuation(v, t, &ratio);
  if (how == Valuation::none) return false;
  const std::size_t before = entries.size();
  for (const Config& c : candidate_configs(v, t)) {
    const int reps = c.gpus / v.tms[t].stages;
    BatchChoice bc = how == Valuation::own
                         ? v.function(t).optimize(c.nodes, reps, v.limits(t, options_.quirks))
                         : projected_choice(v, t, c, ratio);
    if (!bc.valid()) continue;
    GoodputEntry e;
    e.config = c;
    e.raw_goodput = bc.goodput;
    e.throughput = bc.throughput;
    e.batch = bc.setting();
    e.source = how == Valuation::own ? GoodputSource::model : GoodputSource::bootstrap;
    entries.push_back(e);
  }
  return entries.size() > before;
}

std::optional<GoodputEntry> Estimator::fallback_entry(const JobView& v, std::size_t t) const {
  const JobSpec& spec = v.spec;
  const TypeModel& tm = v.tms[t];
  const int gpn = cluster_.types[t].gpus_per_node;
  int u = tm.stages;
  Config cfg{static_cast<int>(t), 0, 0};
  if (spec.adaptivity == Adaptivity::rigid) {
    u = spec.gpus;
    cfg = Config{static_cast<int>(t), (u + gpn - 1) / gpn, u};
  } else {
    // The smallest valid configuration that meets the job's minimum.
    const int need = std::max(u, v.min_rep[t] * tm.stages);
    for (const Config& c : configs_[t]) {
      if (c.gpus >= need && c.gpus % tm.stages == 0) {
        cfg = c;
        break;
      }
    }
    if (cfg.gpus == 0) return std::nullopt;
    u = cfg.gpus;
  }
  if (u > cluster_.types[t].capacity()) return std::nullopt;
  GoodputEntry e;
  e.config = cfg;
  e.goodput = u;
  e.source = GoodputSource::fallback;
  double batch = spec.adaptivity == Adaptivity::adaptive
                     ? std::max(v.b0, static_cast<double>(tm.min_local) * u / tm.stages)
                     : spec.batch_size;
  int b = 0, s = 0;
  const int reps = std::max(1, u / tm.stages);
  split_batch(batch, reps, tm.max_local, v.b0, &b, &s);
  // The batch the split runs: local_bsz x replicas x (accum_steps + 1), rounded up; a
  // pipeline's is the batch asked for, in whole samples.
  e.batch = tm.stages == 1 ? batch_of(b, reps, s)
                           : BatchSetting{static_cast<std::int64_t>(std::ceil(batch)), b, s};
  return e;
}

GoodputRow Estimator::estimate_job(JobState& job) {
  if (job.observations_version == 0) return estimate_fresh(job);
  const std::size_t generation = store_generation(job.spec.model);
  auto same = [](const std::optional<GradientStats>& a, const std::optional<GradientStats>& b) {
    if (a.has_value() != b.has_value()) return false;
    // Bit for bit: equal bits give equal rows.
    return !a || std::memcmp(&*a, &*b, sizeof(GradientStats)) == 0;
  };
  if (const auto& e = job.estimated; e && e->observations_version == job.observations_version &&
                                     e->estimator == id_ && e->store_generation == generation &&
                                     same(e->gradient, job.gradient)) {
    GoodputRow row = e->row;
    const std::optional<Config> was = row.current;
    refresh_row(job, model_of(job), row);
    // Its entries are the set's, and the current configuration's when off the set.
    const bool off_before = was && off_set(*was), off_now = row.current && off_set(*row.current);
    if (row.current == was || (!off_before && !off_now)) return row;
  }
  GoodputRow row = estimate_fresh(job);
  job.estimated = EstimatedRow{job.observations_version, id_, generation, job.gradient, row};
  return row;
}

GoodputRow Estimator::estimate_fresh(JobState& job) {
  JobView v = resolve(job);  // first: an unknown catalog model is the job's first error
  GoodputRow row;
  refresh_row(job, v.info, row);
  v.current = row.current;
  replica_bounds(v, row);
  const JobSpec& spec = job.spec;
  std::vector<GoodputEntry> entries;
  std::vector<std::size_t> no_info;
  for (std::size_t t = 0; t < v.tms.size(); ++t) {
    if (v.tms[t].usable && !value_type(v, t, entries)) no_info.push_back(t);
  }
  // Row normalisation: the smallest known goodput maps to the base unit.
  double m = 0;
  int base = 1;
  for (const auto& e : entries) {
    if (m == 0 || e.raw_goodput < m) {
      m = e.raw_goodput;
      base = spec.adaptivity == Adaptivity::rigid ? spec.gpus : v.tms[e.config.type].stages;
    }
  }
  row.normalizer = m > 0 ? base / m : 1.0;
  for (auto& e : entries) e.goodput = e.raw_goodput * row.normalizer;
  for (std::size_t t : no_info) {
    if (auto e = fallback_entry(v, t)) entries.push_back(*e);
  }
  std::sort(entries.begin(), entries.end(), [](const GoodputEntry& a, const GoodputEntry& b) {
    if (a.config.type != b.config.type) return a.config.type < b.config.type;
    if (a.config.gpus != b.config.gpus) return a.config.gpus < b.config.gpus;
    return a.config.nodes < b.config.nodes;
  });
  row.entries = std::move(entries);
  if (options_.baseline_info) {
    fill_baseline_info(job, row, v.tms, v.max_rep, v.b0, v.bmax, v.gradient);
  }
  return row;
}

void Estimator::fill_baseline_info(JobState& job, GoodputRow& row,
                                   const std::vector<TypeModel>& tms,
                                   const std::vector<int>& max_rep, double b0, double bmax,
                                   const std::optional<GradientStats>& gradient) {
  JobModelInfo& mi = row.model;
  mi.init_batch_size = b0;
  mi.max_batch_size = bmax;
  mi.gradient = gradient;
  mi.types.assign(tms.size(), TypeModelInfo{});
  for (std::size_t t = 0; t < tms.size(); ++t) {
    TypeModelInfo& x = mi.types[t];
    x.known = tms[t].has_model;
    x.params = tms[t].params.to_array();
    x.min_local = tms[t].min_local;
    x.max_local = tms[t].max_local;
    x.stages = tms[t].stages;
    x.max_replicas = max_rep[t];
  }
  for (const auto& o : job.observations) {
    mi.max_observed_replicas = std::max(mi.max_observed_replicas, o.replicas);
  }
  // One model over every type's measurements (the first measurement of a shape wins), with
  // the batch limits of the first type the model has: heterogeneity-unaware policies.
  auto memo = job.resolved.find("*");
  if (job.observations_version != 0 && memo != job.resolved.end() &&
      memo->second.observations_version == job.observations_version) {
    mi.blind_known = memo->second.model.has_model;
    if (mi.blind_known) mi.blind_params = memo->second.model.params.to_array();
  } else {
    blind_model(job, mi);
  }
  for (std::size_t t = 0; t < tms.size(); ++t) {
    if (tms[t].usable) {
      mi.blind_min_local = tms[t].min_local;
      mi.blind_max_local = tms[t].max_local;
      break;
    }
  }
  fill_fixed_entries(job, row, tms, b0, gradient);
}

void Estimator::blind_model(JobState& job, JobModelInfo& mi) {
  std::vector<ProfilePoint> merged;
  for (const auto& o : job.observations) {
    bool seen = false;
    for (const auto& m : merged) {
      seen |= m.nodes == o.nodes && m.replicas == o.replicas && m.local_bsz == o.local_bsz;
    }
    if (!seen) merged.push_back(o);
  }
  if (!merged.empty()) {
    const std::uint64_t print = fingerprint_points(merged);
    auto cached = job.models.find("*");
    if (cached != job.models.end() && cached->second.fingerprint == print &&
        cached->second.points == static_cast<int>(merged.size())) {
      mi.blind_params = cached->second.params.to_array();
    } else {
      PerfParams pp = fit_perf_params(fit_points(merged));
      job.models["*"] = FittedModel{pp, static_cast<int>(merged.size()), print};
      mi.blind_params = pp.to_array();
    }
    mi.blind_known = true;
  }
  if (job.observations_version != 0) {
    TypeModel blind;
    blind.has_model = mi.blind_known;
    blind.params = PerfParams::from_array(mi.blind_params);
    job.resolved["*"] = ResolvedTypeModel{job.observations_version, 0, 0, 0, blind};
  }
}

// The tuned fixed configuration on every type that can hold it.
void Estimator::fill_fixed_entries(JobState& job, GoodputRow& row,
                                   const std::vector<TypeModel>& tms, double b0,
                                   const std::optional<GradientStats>& gradient) {
  const JobSpec& spec = job.spec;
  if (!(spec.gpus > 0 && spec.batch_size > 0)) return;
  row.fixed_gpus = spec.gpus;
  row.fixed_batch = spec.batch_size;
  double m = 0;
  for (std::size_t t = 0; t < tms.size(); ++t) {
    if (!tms[t].usable) continue;
    const int gpn = cluster_.types[t].gpus_per_node;
    if (spec.gpus > cluster_.types[t].capacity()) continue;
    TypeModel tm = type_model(job, t, /*with_seed=*/true);
    if (!tm.has_model) continue;
    GoodputFunction f(tm.params, gradient, b0, tm.stages);
    const int nodes = (spec.gpus + gpn - 1) / gpn;
    BatchChoice bc = f.fixed_batch(nodes, spec.gpus / tm.stages, spec.batch_size, tm.max_local);
    if (!(bc.throughput > 0)) continue;
    GoodputEntry e;
    e.config = Config{static_cast<int>(t), nodes, spec.gpus};
    e.raw_goodput = bc.goodput;
    e.throughput = bc.throughput;
    e.batch = bc.setting();  // the fixed batch as its split runs it
    e.source = tms[t].multi_gpu ? GoodputSource::model : GoodputSource::bootstrap;
    row.fixed.push_back(e);
    if (m == 0 || e.raw_goodput < m) m = e.raw_goodput;
  }
  for (auto& e : row.fixed) e.goodput = m > 0 ? e.raw_goodput * spec.gpus / m : 0;
}

GoodputMatrix Estimator::estimate(std::vector<JobState>& jobs) {
  GoodputMatrix m;
  m.cluster = cluster_;
  m.profile = compat_name(options_.compat);
  m.jobs.reserve(jobs.size());
  for (auto& j : jobs) {
    m.jobs.push_back(estimate_job(j));
    m.order.push_back(j.spec.name);
  }
  std::sort(m.jobs.begin(), m.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  return m;
}

}  // namespace sia
