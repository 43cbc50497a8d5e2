// The simulator's deadline tier (issue 34), kept out of the round: the hooks simulator.cpp
// calls when the workload has guaranteed jobs or deadlines (otherwise none is made, and
// nothing changes).
//  - Admission, the controller's (deadline/admission.hpp): when a guaranteed job first
//    enters a round, it is admitted only if a configuration finishes its remaining work by
//    its deadline (with a 10% margin and one checkpoint-restore) on the GPUs the admitted
//    jobs' plans leave, less those --reservations hold at any time before its deadline
//    (round/reservations.hpp, the controller's count); it then reserves the cheapest one until it
//    ends. The table is read off the round's row (deadline/row_table.hpp). A refused job runs as
//    best-effort (its deadline kept, measured only).
//  - Every row carries its job's class and the seconds to its deadline (GoodputRow), which
//    the edf and elasticflow policies read.
//  - Sia's guarantee, the controller's (round/guarantee.hpp): an admitted guaranteed job's
//    row keeps only the configurations that reach the goodput it needs, boosted.
//  - Results: each job's class, deadline, admission and whether it met its deadline, and
//    the summary's deadline figures (summarize_deadlines).
// Thread-safety: not thread-safe (one per simulation).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/goodput_matrix.hpp"
#include "core/job_spec.hpp"
#include "model/catalog.hpp"
#include "round/reservations.hpp"
#include "sim/simulator.hpp"

namespace sia {

// Whether the workload has a guaranteed job or a deadline (the tier is on).
bool has_deadlines(const std::vector<JobSpec>& workload);

class SimDeadlines {
 public:
  SimDeadlines(const std::vector<JobSpec>& workload, const Cluster& cluster, const Catalog& catalog,
               bool sia_policy, std::optional<std::vector<Reservation>> reservations = {});

  // Admission on job i's first row (at `now`): whether a guaranteed job was refused now
  // (the caller then estimates it as best-effort).
  bool refused_now(int i, double now, const GoodputRow& row);
  // Job i's row in a round at `now`: the class and the time left; Sia's guarantee for an
  // admitted guaranteed job.
  void adjust(int i, double now, GoodputRow& row);
  // Job i ended (finished or stopped): its reservation is freed.
  void ended(int i);
  // Job i's class, deadline and admission on its result.
  void annotate(int i, JobResult& r) const;

 private:
  struct Job {
    JobClass job_class = JobClass::best_effort;
    std::optional<double> deadline;
    bool decided = false, admitted = false;
    std::string type;  // its reservation: `gpus` GPUs of this type
    int gpus = 0;
    int plan_gpus = 0;       // the reservation as admitted (gpus is 0 once it ended)
    double plan_finish = 0;  // when admission planned it to finish
    double b0 = 0;           // initial batch: progress units are iterations at it
  };
  void decide(Job& j, double now, const GoodputRow& row);

  const Cluster& cluster_;
  bool sia_;
  std::vector<Job> jobs_;
  std::map<std::string, int> free_;  // per type: capacity minus the admitted jobs' plans
  std::optional<std::vector<Reservation>> reservations_;  // SimOptions::reservations
};

// The summary's deadline figures from the jobs' results (SimSummary, deadline fields).
void summarize_deadlines(const std::vector<JobResult>& jobs, SimSummary& s);

}  // namespace sia
