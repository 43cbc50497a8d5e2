// The estimator behind sia-estimate: turns jobs (spec + reports) into a GoodputMatrix.
// For every job and every GPU type it fits the job's throughput model to what was measured
// on that type (the bootstrap profile and the workers' reports), picks the best batch for
// each valid configuration, and normalises the row (Sia §3.2-3.3):
//  - scale-up rule: a job may use at most `scale_up` x the largest replica count it has
//    been observed running with, on any type (1 GPU before it ever ran); a guaranteed job
//    (class guaranteed, with a deadline: admitted, round/guarantee.hpp) is exempt -- it is
//    offered every count its batch allows from its first round, the same row admission
//    planned on, so that it is never held behind its schedule by a rule that paces the
//    best-effort jobs' growth;
//  - a type the job has run multi-GPU on uses its own model; a type with only
//    single-GPU measurements borrows the scaling shape of the type with the most
//    observations, scaled by the ratio of their single-GPU throughputs (Sia Eq. 1);
//  - a type with nothing known offers one GPU at the row's base value;
//  - the job's current configuration, when it is not one of the set (a [stages] place of
//    the user's own ran it so, e.g. 2 GPUs on one node and 1 on another), is valued like
//    the others within the same replica bounds, so that keeping the job where it runs is
//    a choice the solver can price rather than a configuration worth nothing.
// The "reference" profile (--compat reference) reproduces the scheduler evaluated in the
// Sia paper instead: models only from running, projection from the first type that has one
// with the catalog's offline throughput ratio, per-type replica caps of 64, the workload's
// batch as the scheduler's batch cap, and its restart penalties; each difference is a named
// flag in EstimatorQuirks (model/estimator_quirks.hpp).
// Profile store (Sia+, opt-in: ProfileStore below): the measurements of every job recorded
// with record() are shared with every later estimate of a job of the same catalog model, so
// the second job of a model starts from the throughput model its predecessors measured
// instead of from its single-GPU bootstrap; with scale_up the scale-up rule counts the
// replicas the store's jobs ran with too.
// estimate_job runs in steps: the row's header, the job's per-type models and projection
// source (resolve), the replica bounds (the scale-up rule), each type's valuation (its own
// model, a projection, or nothing), and the fallback entries of types left without one.
// Thread-safety: an Estimator is not thread-safe (it caches fits); use one per thread.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/cluster.hpp"
#include "core/compat.hpp"
#include "core/configuration.hpp"
#include "core/goodput_matrix.hpp"
#include "core/profile.hpp"
#include "model/catalog.hpp"
#include "model/estimator_quirks.hpp"
#include "model/goodput.hpp"
#include "model/job_state.hpp"
#include "model/shared_profiles.hpp"

namespace sia {

struct EstimatorOptions {
  Compat compat = Compat::standard;  // the profile named in the matrix ("profile")
  EstimatorQuirks quirks;            // what the profile changes (estimator_options sets it)
  bool share_max_replicas = true;
  bool project = true;        // estimate unvisited types from visited ones
  bool seed_profiles = true;  // use the catalog's single-GPU rows as bootstrap profile
  // Seed every measured placement of the catalog on every type (an oracle that has
  // profiled each job everywhere; Profiling::oracle). The scale-up rule still applies, as
  // in the published simulator's oracle runs: it depends on what the job ran with.
  bool oracle_profiles = false;
  int scale_up = 2;
  ConfigLimits limits;              // per-configuration caps (reference: 64 GPUs)
  bool cap_profiled_nodes = false;  // no more nodes than the catalog ever measured
  bool baseline_info = true;        // fill the rows' fixed configurations and type-blind models
  ProfileStore profile_store = ProfileStore::off;  // the profile store (above)
};

class Estimator {
 public:
  Estimator(const Cluster& cluster, const Catalog& catalog, EstimatorOptions options = {});

  const Cluster& cluster() const { return cluster_; }
  const EstimatorOptions& options() const { return options_; }

  // Estimates every job; refreshes each job's fitted-model cache (state.models).
  GoodputMatrix estimate(std::vector<JobState>& jobs);
  // With a non-zero observations_version, a job whose observations version, gradient and
  // store points of its model are those of its last row (job.estimated) gets that row
  // again with this round's header and progress: the same row a fresh estimate gives.
  GoodputRow estimate_job(JobState& job);

  // Resolved per-type models of a job (fits if needed, caching the fit in the job; with a
  // non-zero observations_version, caching the whole result in job.resolved).
  std::vector<TypeModel> type_models(JobState& job);
  // `with_seed` forces the catalog's single-GPU rows into the fit even in the reference
  // profile (the baselines' throughput estimates for fixed configurations need them).
  TypeModel type_model(JobState& job, std::size_t type, bool with_seed = false);

  // Adds the job's observations to the profile store of its catalog model (first
  // measurement of a placement and batch wins); nothing with the store off or no model.
  void record(const JobState& job);
  // Adds a catalog model's shared measurements (Profile::model; a saved store, see
  // model/shared_profiles.hpp) as record() adds a job's; nothing with the store off.
  void share(const Profile& profile);
  // The store: one Profile per catalog model, by model name, points in the order learnt.
  std::vector<Profile> shared_profiles() const;
  // Grows whenever record() or share() adds a measurement.
  std::size_t store_generation() const { return store_generation_; }
  // Unique per Estimator in the process: what one resolved (its options, its store) is not
  // another's.
  std::uint64_t id() const { return id_; }

  // Initial and maximum global batch of a job (spec, else catalog).
  double init_batch_size(const JobState& job) const;
  double max_batch_size(const JobState& job) const;
  double restart_penalty(const JobState& job) const;

 private:
  struct JobView;  // what estimate_job resolved about one job (estimator.cpp)
  enum class Valuation { own, project, none };

  const ModelInfo* model_of(const JobState& job) const;
  TypeModel resolve_type_model(JobState& job, std::size_t type, bool seeded,
                               const std::string& cache_key);
  // The parts of a row that change every round: the header's and the progress.
  void refresh_row(const JobState& job, const ModelInfo* info, GoodputRow& row) const;
  GoodputRow estimate_fresh(JobState& job);
  JobView resolve(JobState& job);
  void replica_bounds(JobView& v, GoodputRow& row) const;
  Valuation valuation(const JobView& v, std::size_t t, double* ratio) const;
  std::vector<Config> candidate_configs(const JobView& v, std::size_t t) const;
  bool off_set(const Config& c) const;  // not among its type's valid configurations
  BatchChoice projected_choice(const JobView& v, std::size_t t, const Config& c,
                               double ratio) const;
  bool value_type(const JobView& v, std::size_t t, std::vector<GoodputEntry>& entries) const;
  std::optional<GoodputEntry> fallback_entry(const JobView& v, std::size_t t) const;
  // The heterogeneity-unaware model (one fit over every type's measurements).
  void blind_model(JobState& job, JobModelInfo& mi);
  void add_shared(const std::string& model, const std::vector<ProfilePoint>& points);
  void fill_fixed_entries(JobState& job, GoodputRow& row, const std::vector<TypeModel>& tms,
                          double b0, const std::optional<GradientStats>& gradient);
  void fill_baseline_info(JobState& job, GoodputRow& row, const std::vector<TypeModel>& tms,
                          const std::vector<int>& max_rep, double b0, double bmax,
                          const std::optional<GradientStats>& gradient);

  Cluster cluster_;
  const Catalog& catalog_;
  EstimatorOptions options_;
  std::vector<std::vector<Config>> configs_;  // per type
  struct SharedProfile {
    std::vector<ProfilePoint> points;                         // in the order added
    std::set<std::tuple<std::string, int, int, int>> shapes;  // type, nodes, replicas, batch
    struct OfType {
      std::vector<std::size_t> points;  // their places in `points`; the count is the type's
                                        // generation (a memo of it stays valid while equal)
      int max_replicas = 0;
    };
    std::map<std::string, OfType> types;  // per GPU type
  };
  std::map<std::string, SharedProfile> store_;  // the profile store, by model
  std::size_t store_generation_ = 0;
  // The observations_version each job (by name) last had its measurements recorded at:
  // record() skips a job whose measurements it has already seen.
  std::unordered_map<std::string, std::uint64_t> recorded_;
  // Points the store holds for `model` on `type` so far (a type_model() memo stays valid
  // while this does not change).
  std::size_t store_generation(const std::string& model, const std::string& type) const;
  // Points the store holds for `model` on every type (an estimated row stays valid while
  // this does not change).
  std::size_t store_generation(const std::string& model) const;
  std::uint64_t id_;
};

// What the scheduler knows of a job's throughput before it runs (the Sia paper's profiling
// study, Subramanya et al., SOSP '23, §5.7): nothing (every type looks alike until the job
// has run there), the bootstrap (single-GPU throughputs per type, projected with Eq. 1; the
// profile's default), or an oracle (every measured placement on every type; the scale-up
// rule still bounds the GPU count by what the job has run with).
enum class Profiling { none, bootstrap, oracle };

// "none" | "bootstrap" | "oracle"; throws Error(usage) naming --profiling otherwise.
Profiling parse_profiling(const std::string& name);
// Sets the options' seeding and projection for `p` (bootstrap leaves the profile's own).
void apply_profiling(EstimatorOptions& options, Profiling p);

// The options of a profile: the defaults above for Compat::standard, with the profile
// store on (kDefaultProfileStore; it holds only what share() and record() add); for
// Compat::reference its quirks, no bootstrap seeding, at most 64 GPUs per configuration
// and no more nodes than the catalog profiled.
EstimatorOptions estimator_options(Compat compat);

}  // namespace sia
