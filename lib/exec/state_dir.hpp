// StateDir: where sia-run keeps what runs on one node, so that every invocation (a shell
// loop, cron, `sia-run status`) sees the same world. Every file is written atomically
// (temp file, fsync, rename); a crash leaves the old version or the new one. What it holds
// is private: files 0600; ROOT, ROOT/jobs and each job's directory 0711 when sia-run makes
// them (a job's account passes through to its own files, lists nothing); a job's logs/ and
// ckpt/, reports.jsonl and batch-plan.json are its account's (exec/run_as.hpp), and what
// root does in them follows os/safe_open.hpp (see sia-run(1), SECURITY).
//   ROOT/node                        the node this directory serves
//   ROOT/lock                        held (flock) by apply, run and stop while they act
//   ROOT/jobs/JOB/launch.json        the current generation's JobLaunch (written by apply)
//   ROOT/jobs/JOB/status.json        its JobStatus (written by the job's supervisor only)
//   ROOT/jobs/JOB/stop.json          a stop request: generation, grace, reason
//   ROOT/jobs/JOB/held               present: stopped by `sia-run stop`, not resumed
//   ROOT/jobs/JOB/supervisor.log     the supervisor's own diagnostics
//   ROOT/jobs/JOB/reports.jsonl      SIA_REPORT: the workers append reports here
//   ROOT/jobs/JOB/batch-plan.json    SIA_BATCH_PLAN: the running generation's batch plan
//   ROOT/jobs/JOB/logs/rank-N.log    each rank's output, appended across generations
//   ROOT/jobs/JOB/ckpt/              SIA_CKPT_DIR unless a checkpoint root is configured
// Thread-safety: a StateDir is a path; concurrent processes are serialised by lock() and
// by each file having one writer.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <vector>
#include "core/names.hpp"

#include "exec/job_launch.hpp"
#include "exec/job_status.hpp"
#include "os/lock_file.hpp"

namespace sia::exec {

struct StopRequest {
  int generation = 0;
  double grace = 120;  // seconds
  std::string reason;
};

// A job as the state directory knows it, with the supervisor's liveness folded in: a
// status left running or stopping by a supervisor that is gone reads as killed.
struct JobRecord {
  std::string job;
  std::optional<JobLaunch> launch;
  JobStatus status;  // generation 0 when there is no launch
  bool held = false;
  bool live() const { return launch && !is_final(status.state); }
};

// An exclusive lock on a state directory, released when destroyed.
using StateLock = os::FileLock;

class StateDir {
 public:
  using AliveFn = std::function<bool(const ProcessId&)>;

  explicit StateDir(const std::string& root, AliveFn alive = is_alive);

  const std::string& root() const { return root_; }
  std::string job_dir(const std::string& job) const;
  std::string rank_log(const std::string& job, int rank) const;
  std::string report_path(const std::string& job) const;
  std::string supervisor_log(const std::string& job) const;
  std::string batch_plan_path(const std::string& job) const;
  // SIA_CKPT_DIR: CKPT_ROOT/JOB when a root is given, else ROOT/jobs/JOB/ckpt.
  std::string ckpt_dir(const std::string& job, const std::string& ckpt_root) const;

  bool exists() const;
  // Creates ROOT and ROOT/jobs (0711) when missing.
  void create() const;
  // Creates ROOT/jobs; records `node` as the node served, or checks it is (status 78).
  void bind_node(const std::string& node);
  std::string bound_node() const;  // "" before the first bind_node
  // Takes the lock; status 75 when another sia-run holds it.
  StateLock lock();

  std::vector<std::string> jobs() const;  // jobs with a launch record, sorted
  JobRecord record(const std::string& job) const;
  std::vector<JobRecord> records() const;

  void write_launch(const JobLaunch& launch);  // also creates the job's directories
  std::optional<JobLaunch> read_launch(const std::string& job) const;
  void write_status(const JobStatus& status);
  std::optional<JobStatus> read_status(const std::string& job) const;
  void write_stop(const std::string& job, const StopRequest& request);
  std::optional<StopRequest> read_stop(const std::string& job) const;
  void set_held(const std::string& job, bool held);
  bool held(const std::string& job) const;

 private:
  std::string root_;
  AliveFn alive_;
};

// --state-dir's default: $SIA_STATE_DIR, else $XDG_STATE_HOME/sia/run, else
// $HOME/.local/state/sia/run (status 78 when none is set).
std::string default_state_dir();

}  // namespace sia::exec
