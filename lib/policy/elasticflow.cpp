// elasticflow: ElasticFlow's allocation (Gu et al., ASPLOS '23) on a GoodputMatrix, one GPU
// type per job (issue 34):
//  1. a job inside a checkpoint-restore keeps its configuration;
//  2. guaranteed jobs, earliest deadline first, each get their minimum satisfactory share:
//     the fewest GPUs of one type whose goodput reaches what the job needs to meet its
//     deadline (policy/deadline_rows.hpp); when no free share reaches it, the fastest
//     configuration that fits;
//  3. the GPUs left go by greedy marginal gain: repeatedly, the step with the largest
//     normalised goodput gained per GPU added -- a job without GPUs to any of its
//     configurations, a job with GPUs to a larger one of the same type -- while one fits;
//  4. every gang is checked against the nodes (baseline::GangPacker, as the placer packs
//     them), guaranteed jobs first; a job that no longer fits falls back to the largest
//     configuration of its type that does.
// Admission (the other half of ElasticFlow) is the simulator's (sim/deadlines.hpp) for
// every policy alike. Stateless and deterministic.
#include <algorithm>
#include <numeric>

#include "policy/baselines.hpp"
#include "policy/deadline_rows.hpp"
#include "policy/gavel_common.hpp"

namespace sia {

namespace {

class ElasticFlowPolicy : public Policy {
 public:
  explicit ElasticFlowPolicy(PolicyOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "elasticflow"; }
  Allocation allocate(const GoodputMatrix& m, const std::optional<Allocation>& previous) override;

 private:
  PolicyOptions o_;
};

bool guaranteed(const GoodputRow& row) {
  return row.job_class == JobClass::guaranteed && row.deadline_in.has_value();
}

int entry_of(const GoodputRow& row, const Config& c) {
  for (std::size_t e = 0; e < row.entries.size(); ++e) {
    if (row.entries[e].config == c) return static_cast<int>(e);
  }
  return -1;
}

// Steps 1 and 2: pinned jobs, then the guaranteed jobs' minimum satisfactory shares.
void reserve_shares(const GoodputMatrix& m, std::vector<int>& chosen, std::vector<int>& free) {
  auto take = [&](std::size_t i, int e) {
    chosen[i] = e;
    free[m.jobs[i].entries[e].config.type] -= m.jobs[i].entries[e].config.gpus;
  };
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    const GoodputRow& row = m.jobs[i];
    if (!(row.restoring && row.current)) continue;
    const int e = entry_of(row, *row.current);
    if (e >= 0 && row.entries[e].config.gpus <= free[row.entries[e].config.type]) take(i, e);
  }
  std::vector<std::size_t> edf;
  for (std::size_t i = 0; i < m.jobs.size(); ++i) {
    if (guaranteed(m.jobs[i]) && chosen[i] < 0) edf.push_back(i);
  }
  std::stable_sort(edf.begin(), edf.end(), [&](std::size_t a, std::size_t b) {
    return *m.jobs[a].deadline_in < *m.jobs[b].deadline_in;
  });
  for (std::size_t i : edf) {
    const GoodputRow& row = m.jobs[i];
    const auto need = required_goodput(row);
    int e = need ? min_satisfactory_entry(row, *need, free) : -1;
    if (e < 0) {  // out of reach: the fastest that fits
      for (std::size_t k = 0; k < row.entries.size(); ++k) {
        const GoodputEntry& en = row.entries[k];
        if (en.config.gpus <= free[en.config.type] &&
            (e < 0 || en.raw_goodput > row.entries[e].raw_goodput)) {
          e = static_cast<int>(k);
        }
      }
    }
    if (e >= 0) take(i, e);
  }
}

// Step 3: greedy marginal gain (normalised goodput per added GPU), one type per job.
void grow(const GoodputMatrix& m, const std::vector<char>& fixed, std::vector<int>& chosen,
          std::vector<int>& free) {
  for (;;) {
    double best_gain = 0;
    std::size_t best_job = 0;
    int best_entry = -1;
    for (std::size_t i = 0; i < m.jobs.size(); ++i) {
      if (fixed[i]) continue;
      const GoodputRow& row = m.jobs[i];
      const GoodputEntry* cur = chosen[i] >= 0 ? &row.entries[chosen[i]] : nullptr;
      for (std::size_t e = 0; e < row.entries.size(); ++e) {
        const GoodputEntry& en = row.entries[e];
        const int t = en.config.type;
        const int added = en.config.gpus - (cur ? cur->config.gpus : 0);
        if (added <= 0 || (cur && t != cur->config.type) || added > free[t]) continue;
        const double gain = (en.goodput - (cur ? cur->goodput : 0)) / added;
        if (gain > best_gain) {
          best_gain = gain;
          best_job = i;
          best_entry = static_cast<int>(e);
        }
      }
    }
    if (best_entry < 0) return;
    const GoodputRow& row = m.jobs[best_job];
    if (chosen[best_job] >= 0) {
      const Config& c = row.entries[chosen[best_job]].config;
      free[c.type] += c.gpus;
    }
    chosen[best_job] = best_entry;
    free[row.entries[best_entry].config.type] -= row.entries[best_entry].config.gpus;
  }
}

Allocation ElasticFlowPolicy::allocate(const GoodputMatrix& m, const std::optional<Allocation>&) {
  const Cluster& cluster = m.cluster;
  std::vector<int> free;
  for (const auto& t : cluster.types) free.push_back(t.capacity());
  std::vector<int> chosen(m.jobs.size(), -1);
  reserve_shares(m, chosen, free);
  std::vector<char> fixed(m.jobs.size(), 0);
  for (std::size_t i = 0; i < m.jobs.size(); ++i) fixed[i] = m.jobs[i].restoring && chosen[i] >= 0;
  grow(m, fixed, chosen, free);

  // Step 4: the gangs on the nodes, pinned and guaranteed jobs first.
  std::vector<std::size_t> order(m.jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(!fixed[a], !guaranteed(m.jobs[a])) <
           std::make_pair(!fixed[b], !guaranteed(m.jobs[b]));
  });
  baseline::GangPacker packer(cluster, !o_.quirks.gangs_by_gpu_count);
  Allocation out;
  out.cluster = cluster;
  out.policy = name();
  out.status = "optimal";
  out.order = m.order;
  for (std::size_t i : order) {
    const GoodputRow& row = m.jobs[i];
    JobAllocation a;
    a.job = row.job;
    int e = chosen[i];
    if (e >= 0 && !packer.add(row.entries[e].config.type, row.entries[e].config.gpus)) {
      const int t = row.entries[e].config.type;
      int fallback = -1;
      for (std::size_t k = 0; k < row.entries.size(); ++k) {
        const Config& c = row.entries[k].config;
        if (c.type == t && c.gpus < row.entries[e].config.gpus && packer.fits(t, c.gpus) &&
            (fallback < 0 || c.gpus > row.entries[fallback].config.gpus)) {
          fallback = static_cast<int>(k);
        }
      }
      e = fallback;
      if (e >= 0) packer.add(t, row.entries[e].config.gpus);
    }
    if (e >= 0) {
      const GoodputEntry& en = row.entries[e];
      a.config = en.config;
      a.batch = en.batch;
      a.goodput = en.goodput;
      out.objective += en.goodput;
    } else {
      a.reason = "no GPUs left by the guaranteed jobs' shares and the greedy growth (" +
                 packer.describe_free() + " free)";
    }
    out.jobs.push_back(std::move(a));
  }
  out.bound = out.objective;
  std::sort(out.jobs.begin(), out.jobs.end(),
            [](const JobAllocation& a, const JobAllocation& b) { return a.job < b.job; });
  return out;
}

}  // namespace

std::unique_ptr<Policy> make_elasticflow_policy(const PolicyOptions& options) {
  return std::make_unique<ElasticFlowPolicy>(options);
}

}  // namespace sia
