#include "model/estimator.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "model/fit.hpp"

namespace sia {

EstimatorOptions reference_estimator_options() {
  EstimatorOptions o;
  o.reference = true;
  o.share_max_replicas = true;
  o.project = true;
  o.seed_profiles = false;
  o.scale_up = 2;
  o.limits.max_gpus = 64;
  o.cap_profiled_nodes = true;
  return o;
}

Estimator::Estimator(const Cluster& cluster, const Catalog& catalog, EstimatorOptions options)
    : cluster_(cluster), catalog_(catalog), options_(options) {
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) {
    configs_.push_back(configs_for_type(static_cast<int>(t), cluster_.types[t].gpus_per_node,
                                        cluster_.types[t].node_count, options_.limits));
  }
}

const ModelInfo* Estimator::model_of(const JobState& job) const {
  if (job.spec.model.empty()) return nullptr;
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
    return options_.reference ? m.restart_penalty : m.restart_cost;
  }
  return 30;
}

TypeModel Estimator::type_model(JobState& job, std::size_t t, bool with_seed) {
  const ModelInfo* info = model_of(job);
  TypeModel tm;
  const std::string& type = cluster_.types[t].name;
  if (!job.spec.allows_type(type)) return tm;
  const ModelGpu* g = info ? info->gpu(type) : nullptr;
  std::vector<ProfilePoint> pts;
  const bool seeded = with_seed || (options_.seed_profiles && !options_.reference);
  const std::string cache_key = seeded && !(options_.seed_profiles && !options_.reference)
                                    ? type + "+seed"
                                    : type;
  if (seeded) {
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
    std::vector<FitPoint> fit;
    fit.reserve(pts.size());
    for (const auto& p : pts) {
      fit.push_back({p.nodes, p.replicas, static_cast<double>(p.local_bsz),
                     std::max(p.step_time - p.sync_time, 1e-9), p.step_time});
    }
    tm.params = fit_perf_params(fit);
    job.models[cache_key] = FittedModel{tm.params, tm.points, print};
  }
  if (!g) {
    // Own profile: the single-GPU throughput at the largest measured batch.
    tm.single_gpu_throughput =
        tm.max_local / iteration_time(tm.params, 1, 1, tm.max_local, 0);
  }
  return tm;
}

std::vector<TypeModel> Estimator::type_models(JobState& job) {
  std::vector<TypeModel> out(cluster_.types.size());
  for (std::size_t t = 0; t < cluster_.types.size(); ++t) out[t] = type_model(job, t);
  return out;
}

namespace {

int max_observed_replicas(const JobState& job, const std::string& type) {
  int r = 0;
  for (const auto& o : job.observations) {
    if (type.empty() || o.gpu_type == type) r = std::max(r, o.replicas);
  }
  return r;
}

}  // namespace

GoodputRow Estimator::estimate_job(JobState& job) {
  const ModelInfo* info = model_of(job);
  const JobSpec& spec = job.spec;
  const bool ref = options_.reference;
  GoodputRow row;
  row.job = spec.name;
  row.adaptivity = spec.adaptivity;
  row.priority = spec.priority;
  row.age = job.age;
  row.restarts = job.restarts;
  row.restart_penalty = restart_penalty(job);
  row.attained_service = job.attained_service;
  row.preemptible = spec.preemptible;
  row.restoring = job.restoring;
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

  const double b0 = init_batch_size(job);
  const double bmax = std::max(b0, max_batch_size(job));
  std::vector<TypeModel> tms = type_models(job);
  const std::size_t ntypes = tms.size();
  const bool have_gradient = job.gradient || (spec.profile && spec.profile->gradient);
  std::optional<GradientStats> gradient = job.gradient;
  if (!gradient && spec.profile) gradient = spec.profile->gradient;

  // Which types have a usable model, in the sense of the active profile.
  std::vector<bool> own(ntypes, false);
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable || !tms[t].has_model) continue;
    own[t] = ref ? have_gradient && max_observed_replicas(job, cluster_.types[t].name) > 0 : true;
  }
  bool any_multi = false;
  for (std::size_t t = 0; t < ntypes; ++t) any_multi |= own[t] && tms[t].multi_gpu;

  // Replica bounds (the scale-up rule), in replicas: GPUs / stages.
  auto observed = [&](const std::string& type) {
    int r = 0;
    for (const auto& o : job.observations) {
      if (!type.empty() && o.gpu_type != type) continue;
      int t = cluster_.type_index(o.gpu_type);
      int stages = t >= 0 ? tms[t].stages : 1;
      r = std::max(r, o.replicas / std::max(1, stages));
    }
    return r;
  };
  std::vector<int> min_rep(ntypes, 1), max_rep(ntypes, 1), cap(ntypes, 1);
  int shared = 1;
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable) continue;
    const std::string& type = cluster_.types[t].name;
    const int u = tms[t].stages;
    const double batch_cap = ref && info ? info->max_batch_size : bmax;
    cap[t] = std::max(1, static_cast<int>(std::floor(batch_cap / tms[t].min_local + 1e-9)));
    if (ref) cap[t] = std::min(cap[t], 64);
    int grow = std::max(options_.scale_up * observed(options_.share_max_replicas && !ref ? "" : type), 1);
    if (ref) grow = std::min(grow, cap[t]);  // the artifact caps per type, then shares
    max_rep[t] = grow;
    shared = std::max(shared, grow);
    min_rep[t] = std::max(1, (spec.min_gpus + u - 1) / u);
  }
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable) continue;
    const int u = tms[t].stages;
    if (options_.share_max_replicas) max_rep[t] = shared;
    if (!ref) max_rep[t] = std::min(max_rep[t], cap[t]);
    if (spec.max_gpus) max_rep[t] = std::min(max_rep[t], std::max(1, spec.max_gpus / u));
    if (spec.adaptivity != Adaptivity::adaptive && spec.gpus > 0) {
      max_rep[t] = std::max(1, spec.gpus / u);
    }
    // A job that needs at least N GPUs starts at N, whatever it was observed with.
    max_rep[t] = std::max(max_rep[t], min_rep[t]);
  }
  row.min_gpus = std::max(1, spec.min_gpus);
  row.max_gpus = 1;
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (tms[t].usable) row.max_gpus = std::max(row.max_gpus, max_rep[t] * tms[t].stages);
  }
  if (spec.adaptivity == Adaptivity::rigid) row.min_gpus = row.max_gpus = spec.gpus;

  // Batch limits per type.
  auto limits_for = [&](std::size_t t) {
    BatchLimits l;
    l.min_local = tms[t].min_local;
    l.max_local = tms[t].max_local;
    if (spec.adaptivity == Adaptivity::adaptive) {
      l.tune = true;
      l.max_batch = ref && spec.batch_size > 0 ? spec.batch_size : bmax;
    } else {
      l.tune = false;
      l.max_batch = spec.batch_size;
    }
    return l;
  };
  auto function_for = [&](std::size_t t) {
    return GoodputFunction(tms[t].params, gradient, b0, tms[t].stages);
  };

  // The source type for projections.
  int src = -1;
  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!own[t]) continue;
    if (ref) {
      src = static_cast<int>(t);
      break;
    }
    if (!tms[t].multi_gpu) continue;
    if (src < 0 || tms[t].points > tms[src].points) src = static_cast<int>(t);
  }

  std::vector<GoodputEntry> entries;
  std::vector<std::size_t> no_info;

  for (std::size_t t = 0; t < ntypes; ++t) {
    if (!tms[t].usable) continue;
    const int gpn = cluster_.types[t].gpus_per_node;
    const int u = tms[t].stages;
    // Choose how this type is valued.
    enum { kOwn, kProject, kNone } how = kNone;
    if (ref) {
      if (own[t]) how = kOwn;
      else if (options_.project && src >= 0) how = kProject;
    } else {
      if (own[t] && (tms[t].multi_gpu || !any_multi)) how = kOwn;
      else if (options_.project && src >= 0 && src != static_cast<int>(t)) how = kProject;
      else if (own[t]) how = kOwn;
    }
    if (how == kNone) {
      no_info.push_back(t);
      continue;
    }
    double ratio = 1;
    if (how == kProject) {
      double xs = tms[src].single_gpu_throughput;
      double xt = tms[t].single_gpu_throughput;
      if (!ref && own[t]) {
        // Eq. 1 with the job's own single-GPU measurements on both types.
        auto at_max = [&](std::size_t k) {
          return tms[k].max_local / iteration_time(tms[k].params, 1, 1, tms[k].max_local, 0);
        };
        xs = at_max(src);
        xt = at_max(t);
      }
      if (!(xs > 0) || !(xt > 0)) {
        no_info.push_back(t);
        continue;
      }
      ratio = xt / xs;
    }
    std::size_t before = entries.size();
    auto add_entry = [&](const Config& c) {
      const int reps = c.gpus / u;
      BatchChoice bc;
      if (how == kOwn) {
        GoodputFunction f = function_for(t);
        bc = f.optimize(c.nodes, reps, limits_for(t));
      } else {
        const int us = tms[src].stages;
        const int gpn_s = cluster_.types[src].gpus_per_node;
        const int nodes_s = (reps * us + gpn_s - 1) / gpn_s;
        GoodputFunction f = function_for(src);
        bc = f.optimize(nodes_s, reps, limits_for(src));
        bc.goodput *= ratio;
        bc.throughput *= ratio;
        // The batch the job would run on this type: same global batch, this type's memory.
        if (bc.valid() && tms[t].stages == 1) {
          int b = 0, s = 0;
          split_batch(bc.batch_size, reps, tms[t].max_local, b0, &b, &s);
          bc.local_bsz = b;
          bc.accum_steps = s;
          bc.batch_size = static_cast<double>(reps) * b * (s + 1);  // the batch it runs
        }
      }
      if (!bc.valid()) return;
      GoodputEntry e;
      e.config = c;
      e.raw_goodput = bc.goodput;
      e.throughput = bc.throughput;
      e.batch_size = bc.batch_size;
      e.local_bsz = bc.local_bsz;
      e.accum_steps = bc.accum_steps;
      e.source = how == kOwn ? GoodputSource::model : GoodputSource::bootstrap;
      entries.push_back(e);
    };
    if (spec.adaptivity == Adaptivity::rigid) {
      const int n = spec.gpus;
      if (n <= cluster_.types[t].capacity()) {
        add_entry(Config{static_cast<int>(t), (n + gpn - 1) / gpn, n});
      }
    } else {
      int max_nodes = INT32_MAX;
      if (options_.cap_profiled_nodes && info) {
        if (const ModelGpu* g = info->gpu(cluster_.types[t].name)) max_nodes = g->max_profiled_nodes;
      }
      for (const Config& c : configs_[t]) {
        if (c.nodes > max_nodes) continue;
        if (c.gpus < min_rep[t] * u || c.gpus > max_rep[t] * u) continue;
        if (u > 1 && c.gpus % u != 0) continue;
        add_entry(c);
      }
    }
    if (entries.size() == before) no_info.push_back(t);
  }

  // Row normalisation: the smallest known goodput maps to the base unit.
  double m = 0;
  int base = 1;
  for (const auto& e : entries) {
    if (m == 0 || e.raw_goodput < m) {
      m = e.raw_goodput;
      base = spec.adaptivity == Adaptivity::rigid ? spec.gpus : tms[e.config.type].stages;
    }
  }
  row.normalizer = m > 0 ? base / m : 1.0;
  for (auto& e : entries) e.goodput = e.raw_goodput * row.normalizer;
  for (std::size_t t : no_info) {
    const int gpn = cluster_.types[t].gpus_per_node;
    int u = tms[t].stages;
    Config cfg{static_cast<int>(t), 0, 0};
    if (spec.adaptivity == Adaptivity::rigid) {
      u = spec.gpus;
      cfg = Config{static_cast<int>(t), (u + gpn - 1) / gpn, u};
    } else {
      // The smallest valid configuration that meets the job's minimum.
      const int need = std::max(u, min_rep[t] * tms[t].stages);
      for (const Config& c : configs_[t]) {
        if (c.gpus >= need && c.gpus % tms[t].stages == 0) {
          cfg = c;
          break;
        }
      }
      if (cfg.gpus == 0) continue;
      u = cfg.gpus;
    }
    if (u > cluster_.types[t].capacity()) continue;
    GoodputEntry e;
    e.config = cfg;
    e.goodput = u;
    e.source = GoodputSource::fallback;
    double batch = spec.adaptivity == Adaptivity::adaptive
                       ? std::max(b0, static_cast<double>(tms[t].min_local) * u / tms[t].stages)
                       : spec.batch_size;
    int b = 0, s = 0;
    const int reps = std::max(1, u / tms[t].stages);
    split_batch(batch, reps, tms[t].max_local, b0, &b, &s);
    // The batch the split runs: local_bsz x replicas x (accum_steps + 1), rounded up.
    e.batch_size = tms[t].stages == 1 ? static_cast<double>(reps) * b * (s + 1) : batch;
    e.local_bsz = b;
    e.accum_steps = s;
    entries.push_back(e);
  }
  std::sort(entries.begin(), entries.end(), [](const GoodputEntry& a, const GoodputEntry& b) {
    if (a.config.type != b.config.type) return a.config.type < b.config.type;
    if (a.config.gpus != b.config.gpus) return a.config.gpus < b.config.gpus;
    return a.config.nodes < b.config.nodes;
  });
  row.entries = std::move(entries);
  if (options_.baseline_info) {
    fill_baseline_info(job, row, tms, max_rep, b0, bmax, gradient);
  } else {
    const ModelInfo* info = model_of(job);
    double total = job.target_progress > 0 ? job.target_progress
                                           : (info ? info->target_progress() : 0.0);
    if (total > 0) row.progress = JobProgress{job.progress, total};
  }
  return row;
}

void Estimator::fill_baseline_info(JobState& job, GoodputRow& row,
                                   const std::vector<TypeModel>& tms,
                                   const std::vector<int>& max_rep, double b0, double bmax,
                                   const std::optional<GradientStats>& gradient) {
  const ModelInfo* info = model_of(job);
  const JobSpec& spec = job.spec;
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
      std::vector<FitPoint> fit;
      for (const auto& p : merged) {
        fit.push_back({p.nodes, p.replicas, static_cast<double>(p.local_bsz),
                       std::max(p.step_time - p.sync_time, 1e-9), p.step_time});
      }
      PerfParams pp = fit_perf_params(fit);
      job.models["*"] = FittedModel{pp, static_cast<int>(merged.size()), print};
      mi.blind_params = pp.to_array();
    }
    mi.blind_known = true;
  }
  for (std::size_t t = 0; t < tms.size(); ++t) {
    if (tms[t].usable) {
      mi.blind_min_local = tms[t].min_local;
      mi.blind_max_local = tms[t].max_local;
      break;
    }
  }
  // How far the job is.
  double total = job.target_progress > 0 ? job.target_progress
                                         : (info ? info->target_progress() : 0.0);
  if (total > 0) row.progress = JobProgress{job.progress, total};
  // The tuned fixed configuration on every type that can hold it.
  if (spec.gpus > 0 && spec.batch_size > 0) {
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
      e.batch_size = bc.batch_size;  // the fixed batch as its split runs it
      e.local_bsz = bc.local_bsz;
      e.accum_steps = bc.accum_steps;
      e.source = tms[t].multi_gpu ? GoodputSource::model : GoodputSource::bootstrap;
      row.fixed.push_back(e);
      if (m == 0 || e.raw_goodput < m) m = e.raw_goodput;
    }
    for (auto& e : row.fixed) e.goodput = m > 0 ? e.raw_goodput * spec.gpus / m : 0;
  }
}

GoodputMatrix Estimator::estimate(std::vector<JobState>& jobs) {
  GoodputMatrix m;
  m.cluster = cluster_;
  m.profile = options_.reference ? "reference" : "default";
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
