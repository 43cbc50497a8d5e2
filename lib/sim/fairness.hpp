// Finish-time fairness (Themis, NSDI '20; Sia §5.5): rho = a job's JCT in the shared
// cluster over its JCT alone on its fair share of the cluster. The fair share of GPU type t
// is its GPUs divided by the job's average contention (the mean number of active jobs
// over the rounds it was active); the isolated JCT on a share of V GPUs is simulated with
// the same policy on a one-type cluster where the job may use at most V GPUs (linear
// between floor(V) and ceil(V); below one GPU, the one-GPU JCT divided by V). On a
// heterogeneous cluster rho is the GPU-count-weighted mean of the per-type rho (Sia Eq. 6);
// the reference profile weights the per-type isolated JCTs instead, as the artifact does.
// Isolated runs are shared between jobs that would run identically (same model, batch
// settings, share and type) and start at a round boundary; a job submitted mid-round is
// credited the part of the round it did not wait.
// A job's isolated runs depend only on its spec and its average contention, which is final
// once it finished: IsolatedRuns starts them then, on worker threads, while the shared
// simulation goes on. A run's result depends only on its key (the spec's model, batch
// settings and restart cost, the type, the GPU count), so a worker with nothing else to do
// may also run, ahead, the runs a long job still active would need with its contention so
// far (speculate()); a run no finished job needs is stopped when the results are asked
// for. Which thread ran a run, and when, changes no result.
// Thread-safety: as simulate(); IsolatedRuns is driven from one thread (its workers are
// its own). It loads every model of the workload into the catalog before its workers start,
// so that they only read it (Catalog loads lazily and is not thread-safe); nothing else may
// load models into that catalog while it lives.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sim/simulator.hpp"

namespace sia {

class IsolatedRuns {
 public:
  // `options`: the shared simulation's (the runs take its policy and profile, without
  // fairness, saved rounds or progress). Loads the workload's models (Error(data) naming an
  // unknown one), then starts hardware threads - 1 workers.
  IsolatedRuns(const Cluster& cluster, const Catalog& catalog, const std::vector<JobSpec>& workload,
               const SimOptions& options);
  ~IsolatedRuns();  // stops the workers (a run in progress ends first)
  IsolatedRuns(const IsolatedRuns&) = delete;
  IsolatedRuns& operator=(const IsolatedRuns&) = delete;

  // Queues the runs a job with this spec and average contention needs (each at most once).
  // Throws Error(software) if its model is not one the constructor loaded.
  void add_job(const JobSpec& spec, double contention);
  // Queues, behind everything add_job() queued, the runs a job still active would need if
  // its average contention stayed at `contention`, once two further calls for the job have
  // given the same GPU counts; only workers run them (none: nothing).
  void speculate(const JobSpec& spec, double contention);
  // How many runs speculate() has queued so far.
  std::size_t speculated() const;
  // A queued run's isolated JCT (-1: the model has no ground truth on the type). The first
  // call runs what is still queued on this thread too and waits for the workers; it throws
  // Error(software) naming the job of the first failed run (in key order) if any failed.
  double jct(const JobSpec& spec, int type, int gpus);

 private:
  using Key = std::tuple<std::string, int, double, int, double, std::string, int>;
  struct Run {
    JobSpec spec;
    int type = 0;
    int gpus = 0;
    bool needed = true;    // a finished job's (else speculative)
    bool started = false;  // taken by a thread
    double jct = -1;       // -1: the model has no ground truth on the type
    std::string error;
    std::atomic<bool> cancel{false};  // stop it at its next round (it is not needed)
  };
  Key key_of(const JobSpec& spec, int type, int gpus) const;
  // Queues a run of `spec` on every type it may use at the GPU counts around its fair share.
  void add_runs(const JobSpec& spec, double contention, bool needed);
  Run* next_run();         // under the lock: the next run to take, marked started (or null)
  void execute(Run& run);  // one run, outside the lock
  void work();             // a worker's loop
  void finish();           // runs the rest here and waits for all

  const Cluster& cluster_;
  const Catalog& catalog_;
  SimOptions iso_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Run> runs_;
  std::deque<Key> queue_;        // runs finished jobs need, in order
  std::deque<Key> speculative_;  // runs active jobs may need, for idle workers
  struct Guess {
    std::vector<int> counts;  // per type: the GPU counts around the share
    int repeats = 0;          // further calls that gave the same
  };
  std::map<std::string, Guess> guesses_;  // per job: its last guess
  std::size_t speculated_ = 0;
  int busy_ = 0;
  bool stop_ = false;
  bool checked_ = false;
  std::vector<std::thread> workers_;
};

// `early`: the runner that has been given finished jobs during the simulation (null: one is
// made here).
void add_finish_time_fairness(SimResult& result, const Cluster& cluster, const Catalog& catalog,
                              const std::vector<JobSpec>& workload, const SimOptions& options,
                              IsolatedRuns* early = nullptr);

}  // namespace sia
