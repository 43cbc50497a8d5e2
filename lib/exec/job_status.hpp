// JobStatus: what a job's supervisor records about one generation of the job -- its
// state, why it is in that state, the supervisor and process group, and every rank's pid
// and, once it ended, how. The supervisor is the only writer (status.json in the job's
// state directory); sia-run apply, stop, run and status read it.
//   running    every rank was started and none has ended on its own yet
//   stopping   sia-run asked the ranks to checkpoint and stop (SIGTERM), or one rank failed
//              and the others are being stopped; SIGKILL follows after the grace period
//   finished   every rank exited 0 (training is complete)
//   preempted  the ranks exited 75 after a stop request, or on their own: resume it
//   failed     a rank failed on its own (any other status, or a signal nobody sent)
//   killed     ranks had to be killed: still running after the grace period, ended by
//              the stop signal itself, or the supervisor died
// Thread-safety: plain values.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/node.hpp"
#include "exec/process_exit.hpp"
#include "exec/process_id.hpp"

namespace sia::exec {

enum class RunState { running, stopping, finished, preempted, failed, killed };

const char* to_string(RunState s);
std::optional<RunState> parse_run_state(std::string_view s);
bool is_final(RunState s);  // finished, preempted, failed, killed
// A state, as RunStatus writes it, whose processes may still hold GPUs (running, stopping).
bool holds_gpus(std::string_view state);

struct RankStatus {
  int rank = 0;
  pid_t pid = -1;
  std::optional<ProcessExit> exit;  // set once it ended
  bool stopped = false;             // it ended after the supervisor had begun to stop the job
};

struct JobStatus {
  std::string job;
  int generation = 0;
  RunState state = RunState::running;
  std::string reason;  // one line for people: why the job is in this state
  ProcessId supervisor;
  pid_t group = 0;  // the ranks' process group
  std::vector<RankStatus> ranks;
  // The rank the supervisor blamed for the failure (failing_rank()); nullopt: none, or a
  // status.json from before the field.
  std::optional<int> failed_rank;

  // The job's exit status: the failing rank's when there is one (not the 69 of a peer
  // that lost it, nor the 75 of the ranks stopped after it); else by the srun rule, ranks
  // that ended on their own first. nullopt while no rank has ended.
  std::optional<ProcessExit> exit() const;
  std::vector<pid_t> live_pids() const;  // ranks that have not ended
  // The rank whose failure ended the job: failed_rank when set; else the lowest-numbered
  // rank that ended on its own with a failure (not one stopped after it); nullopt when no
  // rank did.
  std::optional<int> failing_rank() const;
};

nlohmann::json job_status_to_json(const JobStatus& s);
JobStatus parse_job_status(const Node& data);

}  // namespace sia::exec
