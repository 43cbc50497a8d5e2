// Executor: carries out sia-run's decisions on a state directory. It asks supervisors to
// checkpoint-stop their jobs (stop.json, then SIGTERM to the supervisor) and waits for the
// jobs to end, and it starts a supervisor for each new generation (launch.json, then the
// hidden `sia-run supervise`) and waits until that supervisor has recorded its start.
// A batch-only change of a running job (resize) writes the job's next batch plan
// (SIA_BATCH_PLAN) for its workers to take at a step boundary, and records it in
// launch.json; nothing is stopped or started.
// Every wait has a deadline: a job still live `grace` + 10 s after its stop request has
// its supervisor and process group killed.
// Thread-safety: one thread; the caller holds the state directory's lock.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "exec/job_launch.hpp"
#include "exec/state_dir.hpp"
#include "os/clock.hpp"

namespace sia::exec {

// Seconds beyond a stop's grace period before a job still live is killed.
inline constexpr double kKillMarginSeconds = 10;

class Executor {
 public:
  Executor(StateDir& state, os::Clock& clock) : state_(state), clock_(clock) {}

  // Asks each named job, if live, to stop within `grace` seconds, then waits for all.
  void stop(const std::vector<std::pair<std::string, std::string>>& jobs_and_reasons, double grace);
  // Sends the stop request without waiting. A job already stopping is left to finish
  // unless `force` (then its supervisor is signalled again, which kills at once).
  void request_stop(const JobRecord& record, const std::string& reason, double grace, bool force);
  // Waits for the jobs that are stopping already (their own failure, another sia-run).
  void wait_stopping();
  // Starts `launch` (a prepared generation) and returns its supervisor's pid.
  pid_t start(const JobLaunch& launch, bool detached);
  // Gives the running generation of `record` the batch settings of `wanted`: the batch
  // plan file first (numbered past any plan already written to the round; its batch_size
  // is local_bsz x world size x (accum_steps + 1), what the workers will train), then
  // launch.json (with the placement's numbers), so that a crash in between only repeats
  // the plan.
  void resize(const JobRecord& record, const JobLaunch& wanted);

 private:
  void wait_ended(const std::vector<std::string>& jobs, double grace);

  StateDir& state_;
  os::Clock& clock_;
};

}  // namespace sia::exec
