// The round engine: one scheduling round of the controller, on a JobBook loaded by a
// caller that holds the state lock (`sia-ctl round`, or the daemon's loop).
//   1. take in the inbox: submissions and cancellations are checked (a job name is never
//      reused; a bad request is journaled as rejected and moved to STATE/inbox/rejected),
//      journaled, then their files removed;
//   2. observe the nodes and drain their reports; journal which nodes answered and every
//      new report line (deduplicated by node, job and offset);
//   3. end the jobs whose workers ended: finished (every rank exited 0) or failed (a rank
//      failed on its own), as the RunStatus of a node the job is placed on says -- once
//      (a node's word on a job placed elsewhere is ignored, see node_speaks_for); of a
//      job failed on several nodes, a node whose rank failed by itself is blamed before
//      one whose rank lost a peer (exit 69), which waits while another node of its
//      placement is silent or still runs or stops the job; ranks that lost a peer on a
//      node that is down (fenced, gone) did not fail by themselves: the job is not ended,
//      the next placement (without that node) resumes it from its checkpoint; a lost peer
//      on a node the job has left since counts for nothing; a job on several nodes whose
//      ranks lost their peers while every node of it was up and had its say (they could
//      not reach each other) starts again from its checkpoint as a new attempt (a
//      job-peer-lost record; its Jobs document's state.attempt), at most
//      controller.peer_retries times in a row without progress (BookJob::peer_retries_used),
//      then fails with that reason;
//   3b. run the app schedulers (successive halving) on their trials' reports: a trial that
//      reached its phase's budget waits out of the schedule; when every live trial of the
//      phase is there, the worse ones end as stopped (their GPUs freed this round) and the
//      phase advances (an app-phase record);
//   4. take the census (round/census.hpp): hung, held and requeued jobs and trials waiting
//      at their rung are left out of the schedule but count in the fairness units active;
//      schedule the other active jobs (those that reported "done" keep their GPUs), on the
//      configured cluster less the nodes that did not answer: estimate -> solve -> place
//      (stages.hpp); save the round's documents in STATE/rounds (retention); its finish-time
//      fairness (the units the census counted); journal the decision (placement,
//      allocation, refreshed model fits, fairness);
//   5. deliver every node its placement through the NodeDriver and journal each node's
//      answer (which jobs it started, restarted, kept -- starts and restarts are counted
//      from these);
//   6. write a snapshot and empty the journal.
// An ended job is never in a placement handed to the nodes. With dry_run nothing is
// journaled, delivered, saved or removed: the round's decision is only printed.
// The steps run through run_round (round/round_driver.hpp), the sequence the simulator's
// rounds run too.
// Thread-safety: one thread.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"
#include "ctl/node_outputs.hpp"
#include "ctl/report_records.hpp"
#include "ctl/stages.hpp"
#include "ctl/state_store.hpp"
#include "round/census.hpp"

namespace sia::ctl {

struct RoundOptions {
  bool dry_run = false;
  std::function<double()> now;                   // seconds since the epoch; null: clock
  std::function<void(const std::string&)> warn;  // warnings for people; null: dropped
  // Runs the stages, the round's longest part: null runs them here; the daemon runs them
  // on another thread and keeps serving its channel meanwhile. The book may then change
  // while they run (submissions, cancellations, reports): a job that ended meanwhile is
  // left out of the round's placement.
  std::function<void(const std::function<void()>&)> run_stages;
};

// The cluster with only `up` nodes (node groups keep their order; a GPU type with no node
// left is dropped). Empty `nodes` when none is up.
Cluster cluster_without_down(const Cluster& cluster, const std::vector<std::string>& up);

class RoundEngine {
 public:
  RoundEngine(const Settings& config, Cluster cluster, const StateStore& store, NodeDriver& driver,
              RoundOptions options = {});
  // Runs one round; returns the data of a RoundResult document.
  nlohmann::json run(JobBook& book);

 private:
  struct Pass;   // one round in progress
  struct World;  // the round's steps as round/round_driver.hpp runs them
  // The steps of run(), in order (the numbers above).
  void take_inbox(Pass& r);
  void observe(Pass& r);
  void end_ended(Pass& r);
  void schedule_apps(Pass& r);
  void leave_out_hung(Pass& r);
  void peers_lost(Pass& r, const BookJob& b, const JobOnNode& failed);
  Census census(Pass& r);
  StageInput stage_input(Pass& r, const Cluster& up_cluster);
  void schedule(Pass& r);
  nlohmann::json round_fairness(const Pass& r) const;
  void deliver(Pass& r);
  void summarize(Pass& r);
  // Ends `job`: its record, and a line of the round's result.
  void end_job(Pass& r, const std::string& job, Lifecycle state, const std::string& reason,
               std::optional<int> exit_status,
               const std::optional<LogTail>& log_tail = std::nullopt);
  void flush(Pass& r);  // journals the step's records
  void commit(JobBook& book, std::vector<nlohmann::json> records);
  void warn(const std::string& w);

  Settings config_;
  Cluster cluster_;
  const StateStore& store_;
  NodeDriver& driver_;
  RoundOptions options_;
  ForeignReports foreign_;  // report lines refused, warned once per (node, job)
};

double wall_clock();

}  // namespace sia::ctl
