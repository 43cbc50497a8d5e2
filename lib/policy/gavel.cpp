// The baselines that run every job rigidly at its tuned fixed configuration (baselines.hpp):
//
// gavel (Narayanan et al., OSDI '20, as the Sia paper, Subramanya et al., SOSP '23, ran
// it). Every round:
//   1. the max-sum-throughput LP over time fractions x_it (job i on GPU type t):
//      maximise sum_i sum_t T_it x_it, x >= 0, sum_t x_it <= 1, sum_i s_i x_it <= GPUs of t,
//      T_it = iterations/s of the job's fixed configuration on t, s_i its fixed GPU count,
//      no column where t cannot hold the job; GLPK simplex (--compat reference: then the
//      analytic centre of the optimal face, interior_point.hpp); x rounded to 5 decimals;
//   2. the round-based realisation: per-(job, type) time counters job_time (round/2 for a
//      new job on every type, also added to the type's cluster_time); priority_it =
//      x_it / (job_time_it / cluster_time_t) (x_it * 1e9 when that fraction is 0, 0 when
//      x_it = 0); one global list of (job, type) sorted by (priority, x) descending, ties
//      by job name then type order (--compat reference: type order, then submission
//      order, as the artifact's stable sort); walk it and schedule each job at most once,
//      exactly s_i GPUs of one type that still has room (a job with x = 0 still takes
//      room nobody else wants); then add the round to the scheduled jobs' job_time and to
//      their types' cluster_time. A running non-preemptible job keeps its configuration
//      first. With PolicyOptions::gavel_reset > 0 the counters restart (round/2 each) at
//      most that often, as the original Gavel does (>= 1920 s); 0 never does (the artifact).
//   Jobs whose allocation is lower in the list wait: Gavel time-shares whole jobs.
//   "Room" is GangPacker's (gavel_common.hpp): the gang must pack onto the type's nodes as
//   the placer places it; --compat reference counts GPUs only, as the artifact does.
//   The artifact solves the LP with ECOS (interior point), whose answer on a degenerate
//   optimum spreads x over equal jobs and types; --compat reference answers so too (the
//   analytic centre of the optimal face). The default profile keeps the simplex's vertex:
//   equal jobs may get unequal shares and a job is split over fewer types, so fewer jobs
//   move between rounds (simulating the shipped Philly and Saturn workloads, its average
//   JCT is 11% and 23% lower than with the centre). Under --compat reference the simulator
//   also shows gavel the true throughputs of the tuned configurations, as the artifact's
//   Gavel reads them from the measured tables (PolicyInfo::reference_true_rates).
// ftf-lp: the same realisation of the min-max finish-time-fairness LP (§5.1, with Sia's
//   denominator; min_max_finish_time_fairness in gavel_common.hpp).
// fifo: jobs in arrival order (oldest first, then name) each take the type with the highest
//   throughput for their fixed configuration that still has room for the gang; later
//   jobs fill what is left (backfilling). srtf: the same in order of shortest remaining
//   time first (statistical progress left / progress rate of the fastest type; unknown
//   progress last, then arrival order). edf: the same in order of earliest deadline first
//   (issue 34): guaranteed jobs by the time left to their deadlines, then best-effort jobs
//   with a deadline by theirs, then the rest in arrival order.
//
// State: gavel and ftf-lp keep the time counters, the cluster time, the elapsed time and
// the job set in the object and write them to Allocation::policy_state as JSON
//   {"policy", "round", "elapsed", "last_reset", "cluster_time": {type: s},
//    "job_time": {job: {type: s}}}
// which a fresh object loads from --previous (then behaves as the live one). Jobs that
// leave the matrix leave the state; cluster time keeps their share, as in the artifact.
// fifo, srtf and edf are stateless. Everything is deterministic; nothing is random.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_limits.hpp"
#include "policy/baselines.hpp"
#include "policy/gavel_common.hpp"

namespace sia {

namespace {

using baseline::GangPacker;
using baseline::Job;
using baseline::LpResult;
using baseline::Option;

std::string format_g(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

PolicyOptions checked(PolicyOptions o, const std::string& name) {
  if (std::isnan(o.round) || !(o.round > 0)) o.round = default_round(name);
  return o;  // the round and the knobs checked by make_policy
}

// The explanation of a job (--explain): `value` is its LP time share on the type it got (0
// when it waits, and for fifo/srtf), the alternative its fastest other type.
Explanation explain_job(const Job& job, const GoodputRow& row, int chosen,
                        const std::vector<double>* x, const Cluster& cluster) {
  Explanation e;
  e.pinned = chosen >= 0 && chosen == job.pinned;
  int alt = -1;
  for (std::size_t k = 0; k < job.options.size(); ++k) {
    if (static_cast<int>(k) == chosen) continue;
    if (alt < 0 || job.options[k].rate > job.options[alt].rate) alt = static_cast<int>(k);
  }
  if (chosen >= 0) {
    const Option& o = job.options[chosen];
    e.goodput = o.entry->goodput;
    if (x) e.value = (*x)[chosen];
  }
  e.max_gpus = row.max_gpus;
  if (alt >= 0) {
    const Option& o = job.options[alt];
    const int gpn = cluster.types[o.type].gpus_per_node;
    e.alternative = Config{o.type, (o.gpus + gpn - 1) / gpn, o.gpus};
    e.alternative_goodput = o.entry->goodput;
    e.alternative_value = x ? (*x)[alt] : 0;
  }
  return e;
}

// ---------------------------------------------------------------------------------------
// gavel and ftf-lp: time fractions from an LP, realised round by round.

class RoundRobinPolicy : public Policy {
 public:
  RoundRobinPolicy(std::string name, PolicyOptions options) : name_(std::move(name)), o_(options) {}
  std::string name() const override { return name_; }
  Allocation allocate(const GoodputMatrix& m, const std::optional<Allocation>& previous) override;

 protected:
  virtual LpResult fractions(const std::vector<Job>& jobs, const GoodputMatrix& m) = 0;
  const PolicyOptions& options() const { return o_; }

 private:
  struct Entry {
    int job = 0, option = 0;
    double priority = 0, x = 0;
  };
  // Returns a note when the state is not this policy's.
  std::string load(const std::string& text);
  std::string dump() const;
  void sync(const GoodputMatrix& m);

  std::string name_;
  PolicyOptions o_;
  bool started_ = false;
  double elapsed_ = 0;                          // seconds of rounds allocated so far
  double last_reset_ = 0;                       // elapsed_ at the last reset of the counters
  std::map<std::string, double> cluster_time_;  // type -> s
  std::map<std::string, std::map<std::string, double>> job_time_;  // job -> type -> s
};

std::string RoundRobinPolicy::load(const std::string& text) {
  const std::string where = "--previous: policy_state: ";
  nlohmann::json s = parse_json_bounded(text);
  if (s.is_discarded()) throw Error(ExitStatus::data, where + "not JSON, or nested too deeply");
  if (!s.is_object()) throw Error(ExitStatus::data, where + "expected an object");
  auto number = [&](const nlohmann::json& v, const std::string& path) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      throw Error(ExitStatus::data, where + path + ": expected a number >= 0");
    }
    return v.get<double>();
  };
  if (!s.contains("policy") || !s["policy"].is_string()) {
    throw Error(ExitStatus::data, where + "policy: expected a string");
  }
  if (s["policy"].get<std::string>() != name_) {
    return "the previous policy_state is " + s["policy"].get<std::string>() +
           "'s; counters start afresh";
  }
  std::map<std::string, double> cluster_time;
  std::map<std::string, std::map<std::string, double>> job_time;
  const double elapsed = s.contains("elapsed") ? number(s["elapsed"], "elapsed") : 0;
  const double last_reset = s.contains("last_reset") ? number(s["last_reset"], "last_reset") : 0;
  if (s.contains("cluster_time")) {
    if (!s["cluster_time"].is_object()) {
      throw Error(ExitStatus::data, where + "cluster_time: expected an object");
    }
    for (const auto& [type, v] : s["cluster_time"].items()) {
      cluster_time[type] = number(v, "cluster_time." + type);
    }
  }
  if (s.contains("job_time")) {
    if (!s["job_time"].is_object()) {
      throw Error(ExitStatus::data, where + "job_time: expected an object");
    }
    for (const auto& [job, types] : s["job_time"].items()) {
      if (!types.is_object()) {
        throw Error(ExitStatus::data, where + "job_time." + job + ": expected an object");
      }
      for (const auto& [type, v] : types.items()) {
        job_time[job][type] = number(v, "job_time." + job + "." + type);
      }
    }
  }
  elapsed_ = elapsed;
  last_reset_ = last_reset;
  cluster_time_ = std::move(cluster_time);
  job_time_ = std::move(job_time);
  return "";
}

std::string RoundRobinPolicy::dump() const {
  nlohmann::json s;
  s["policy"] = name_;
  s["round"] = o_.round;
  s["elapsed"] = elapsed_;
  s["last_reset"] = last_reset_;
  s["cluster_time"] = cluster_time_;
  s["job_time"] = nlohmann::json::object();
  for (const auto& [job, types] : job_time_) s["job_time"][job] = types;
  return s.dump();
}

void RoundRobinPolicy::sync(const GoodputMatrix& m) {
  const double half = o_.round / 2;
  std::map<std::string, double> cluster_time;
  for (const auto& t : m.cluster.types) {
    auto it = cluster_time_.find(t.name);
    cluster_time[t.name] = it == cluster_time_.end() ? 0.0 : it->second;
  }
  cluster_time_ = std::move(cluster_time);
  std::map<std::string, std::map<std::string, double>> job_time;
  for (const auto& row : m.jobs) {
    auto& mine = job_time[row.job];
    auto old = job_time_.find(row.job);
    for (const auto& t : m.cluster.types) {
      if (old != job_time_.end()) {
        if (auto v = old->second.find(t.name); v != old->second.end()) {
          mine[t.name] = v->second;
          continue;
        }
      }
      // New to this type: half a round, as Gavel starts every new job.
      mine[t.name] = half;
      cluster_time_[t.name] += half;
    }
  }
  job_time_ = std::move(job_time);
  if (o_.gavel_reset > 0 && elapsed_ - last_reset_ >= o_.gavel_reset) {
    for (auto& [type, v] : cluster_time_) v = 0;
    for (auto& [job, types] : job_time_) {
      for (auto& [type, v] : types) {
        v = half;
        cluster_time_[type] += half;
      }
    }
    last_reset_ = elapsed_;
  }
}

Allocation RoundRobinPolicy::allocate(const GoodputMatrix& m,
                                      const std::optional<Allocation>& previous) {
  std::string note;
  if (!started_ && previous && !previous->policy_state.empty()) note = load(previous->policy_state);
  started_ = true;
  const Cluster& cluster = m.cluster;
  std::vector<Job> jobs = baseline::jobs_of(m, previous);
  sync(m);
  LpResult lp = fractions(jobs, m);

  // Priorities, one global list.
  std::vector<Entry> list;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& times = job_time_[m.jobs[jobs[j].row].job];
    for (std::size_t k = 0; k < jobs[j].options.size(); ++k) {
      const std::string& type = cluster.types[jobs[j].options[k].type].name;
      const double x = lp.x[j][k];
      const double ct = cluster_time_[type];
      const double fraction = ct > 0 ? times.at(type) / ct : 0.0;
      double priority = 0;
      if (x > 0) priority = fraction > 0 ? x / fraction : x * 1e9;
      list.push_back({static_cast<int>(j), static_cast<int>(k), priority, x});
    }
  }
  std::sort(list.begin(), list.end(), [&](const Entry& a, const Entry& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.x != b.x) return a.x > b.x;
    const int ta = jobs[a.job].options[a.option].type, tb = jobs[b.job].options[b.option].type;
    if (o_.quirks.gavel_ties_by_submission) {
      if (ta != tb) return ta < tb;
      return jobs[a.job].order < jobs[b.job].order;
    }
    if (a.job != b.job) return a.job < b.job;  // rows are sorted by name
    return ta < tb;
  });

  GangPacker packer(cluster, !o_.quirks.gangs_by_gpu_count);
  std::vector<int> chosen(jobs.size(), -1);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const int p = jobs[j].pinned;
    if (p >= 0 && packer.add(jobs[j].options[p].type, jobs[j].options[p].gpus)) chosen[j] = p;
  }
  for (const Entry& e : list) {
    if (chosen[e.job] >= 0) continue;
    const Option& o = jobs[e.job].options[e.option];
    if (packer.add(o.type, o.gpus)) chosen[e.job] = e.option;
  }

  Allocation out;
  out.cluster = cluster;
  out.policy = name_;
  out.status = lp.status;
  out.objective = lp.objective;
  out.bound = lp.status == "optimal" ? lp.objective : 0;
  out.note = lp.note.empty() ? note : note.empty() ? lp.note : lp.note + "; " + note;
  out.order = m.order;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    const GoodputRow& row = m.jobs[job.row];
    JobAllocation a;
    if (chosen[j] >= 0) {
      const Option& o = job.options[chosen[j]];
      a = baseline::allocated(row, o, cluster);
      const std::string& type = cluster.types[o.type].name;
      job_time_[row.job][type] += o_.round;
      cluster_time_[type] += o_.round;
    } else {
      a.job = row.job;
      int best = -1;
      for (std::size_t k = 0; k < job.options.size(); ++k) {
        if (lp.x[j][k] > 0 && (best < 0 || lp.x[j][k] > lp.x[j][best])) best = static_cast<int>(k);
      }
      if (job.options.empty()) {
        a.reason = job.no_option;
      } else if (best >= 0) {
        a.reason =
            "time-sharing: lower priority than the jobs scheduled this round (LP time share " +
            format_g(lp.x[j][best]) + " on " + cluster.types[job.options[best].type].name + ")";
      } else {
        a.reason = "the " + std::string(name_ == "gavel" ? "throughput" : "fairness") +
                   " LP gives it no time share and " +
                   baseline::no_room_reason(job, packer, cluster);
      }
    }
    if (o_.explain) a.explain = explain_job(job, row, chosen[j], &lp.x[j], cluster);
    out.jobs.push_back(std::move(a));
  }
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const JobAllocation& a, const JobAllocation& b) { return a.job < b.job; });
  elapsed_ += o_.round;
  out.policy_state = dump();
  return out;
}

class GavelPolicy : public RoundRobinPolicy {
 public:
  explicit GavelPolicy(const PolicyOptions& o) : RoundRobinPolicy("gavel", o) {}

 protected:
  LpResult fractions(const std::vector<Job>& jobs, const GoodputMatrix& m) override {
    return baseline::max_sum_throughput(jobs, m.cluster, solve_limits(options()),
                                        options().quirks.gavel_analytic_centre);
  }
};

class FtfLpPolicy : public RoundRobinPolicy {
 public:
  explicit FtfLpPolicy(const PolicyOptions& o) : RoundRobinPolicy("ftf-lp", o) {}

 protected:
  LpResult fractions(const std::vector<Job>& jobs, const GoodputMatrix& m) override {
    return baseline::min_max_finish_time_fairness(jobs, m, options().round,
                                                  solve_limits(options()));
  }
};

// ---------------------------------------------------------------------------------------
// fifo, srtf and edf: a queue order, each job its fastest type with room.

enum class QueueOrder { arrival, remaining, deadline };

// Deadlines first (guaranteed jobs before best-effort ones), earliest first; 0: no deadline.
std::pair<int, double> deadline_key(const GoodputRow& row) {
  if (!row.deadline_in) return {2, 0.0};
  return {row.job_class == JobClass::guaranteed ? 0 : 1, *row.deadline_in};
}

class QueuePolicy : public Policy {
 public:
  QueuePolicy(QueueOrder order, PolicyOptions options) : order_(order), o_(options) {}
  std::string name() const override {
    return order_ == QueueOrder::remaining  ? "srtf"
           : order_ == QueueOrder::deadline ? "edf"
                                            : "fifo";
  }
  Allocation allocate(const GoodputMatrix& m, const std::optional<Allocation>& previous) override;

 private:
  const char* order_words() const {
    return order_ == QueueOrder::remaining  ? "shortest remaining time first"
           : order_ == QueueOrder::deadline ? "earliest deadline first"
                                            : "arrival order";
  }
  QueueOrder order_;
  PolicyOptions o_;
};

Allocation QueuePolicy::allocate(const GoodputMatrix& m,
                                 const std::optional<Allocation>& previous) {
  const Cluster& cluster = m.cluster;
  std::vector<Job> jobs = baseline::jobs_of(m, previous);
  std::vector<double> remaining(jobs.size(), -1);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    remaining[j] = jobs[j].remaining_seconds(m.jobs[jobs[j].row]);
  }
  std::vector<int> queue(jobs.size());
  std::iota(queue.begin(), queue.end(), 0);
  std::stable_sort(queue.begin(), queue.end(), [&](int a, int b) {
    if (order_ == QueueOrder::deadline) {
      const auto da = deadline_key(m.jobs[jobs[a].row]), db = deadline_key(m.jobs[jobs[b].row]);
      if (da != db) return da < db;
    }
    if (order_ == QueueOrder::remaining) {
      const bool ka = remaining[a] >= 0, kb = remaining[b] >= 0;
      if (ka != kb) return ka;
      if (ka && remaining[a] != remaining[b]) return remaining[a] < remaining[b];
    }
    return m.jobs[jobs[a].row].age > m.jobs[jobs[b].row].age;  // then name: rows are sorted
  });

  GangPacker packer(cluster, !o_.quirks.gangs_by_gpu_count);
  std::vector<int> chosen(jobs.size(), -1);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const int p = jobs[j].pinned;
    if (p >= 0 && packer.add(jobs[j].options[p].type, jobs[j].options[p].gpus)) chosen[j] = p;
  }
  std::vector<int> position(jobs.size(), 0);
  double objective = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const int j = queue[q];
    position[j] = static_cast<int>(q) + 1;
    const Job& job = jobs[j];
    if (chosen[j] >= 0) {
      objective += job.options[chosen[j]].rate;
      continue;
    }
    std::vector<int> by_speed(job.options.size());
    std::iota(by_speed.begin(), by_speed.end(), 0);
    std::stable_sort(by_speed.begin(), by_speed.end(), [&](int a, int b) {
      const Option &oa = job.options[a], &ob = job.options[b];
      if (oa.rate != ob.rate) return oa.rate > ob.rate;
      return (oa.type == job.current_type) > (ob.type == job.current_type);
    });
    for (int k : by_speed) {
      if (packer.add(job.options[k].type, job.options[k].gpus)) {
        chosen[j] = k;
        objective += job.options[k].rate;
        break;
      }
    }
  }

  Allocation out;
  out.cluster = cluster;
  out.policy = name();
  out.status = "optimal";
  out.objective = objective;
  out.bound = objective;
  out.order = m.order;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    const GoodputRow& row = m.jobs[job.row];
    JobAllocation a;
    if (chosen[j] >= 0) {
      a = baseline::allocated(row, job.options[chosen[j]], cluster);
    } else {
      a.job = row.job;
      std::string place =
          "queue position " + std::to_string(position[j]) + " (" + order_words() + ")";
      a.reason = job.options.empty()
                     ? job.no_option
                     : place + ": " + baseline::no_room_reason(job, packer, cluster);
    }
    if (o_.explain) a.explain = explain_job(job, row, chosen[j], nullptr, cluster);
    out.jobs.push_back(std::move(a));
  }
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const JobAllocation& a, const JobAllocation& b) { return a.job < b.job; });
  return out;
}

}  // namespace

std::unique_ptr<Policy> make_gavel_policy(const PolicyOptions& options) {
  return std::make_unique<GavelPolicy>(checked(options, "gavel"));
}
std::unique_ptr<Policy> make_ftf_lp_policy(const PolicyOptions& options) {
  return std::make_unique<FtfLpPolicy>(checked(options, "ftf-lp"));
}
std::unique_ptr<Policy> make_fifo_policy(const PolicyOptions& options) {
  return std::make_unique<QueuePolicy>(QueueOrder::arrival, checked(options, "fifo"));
}
std::unique_ptr<Policy> make_srtf_policy(const PolicyOptions& options) {
  return std::make_unique<QueuePolicy>(QueueOrder::remaining, checked(options, "srtf"));
}
std::unique_ptr<Policy> make_edf_policy(const PolicyOptions& options) {
  return std::make_unique<QueuePolicy>(QueueOrder::deadline, checked(options, "edf"));
}

}  // namespace sia
