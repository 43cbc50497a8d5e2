// Supervisor: runs one generation of one job to its end. It starts every rank through a
// Launcher, records the job's status after every change, and stops the job -- SIGTERM to
// all ranks, then SIGKILL to the group when the grace period has passed -- when it is
// asked to (a termination signal: `sia-run stop`, apply, run being interrupted, or its
// parent dying), or when one rank fails or preempts itself, so the others do not hang in
// a collective. The failure blamed is the first rank that failed by itself (not of a lost
// peer, exit 69, nor of the stop signal), also when a peer that lost it ended first; only
// when none did, the first failing rank. A second stop request during the grace period kills at
// once. The final status says finished, preempted, failed or killed (see job_status.hpp) and keeps
// every rank's exit. Thread-safety: one thread; the launcher and clock are used from it only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/job_status.hpp"
#include "exec/launcher.hpp"
#include "exec/state_dir.hpp"
#include "os/clock.hpp"

namespace sia::exec {

struct SupervisorConfig {
  std::string job;
  int generation = 1;
  std::vector<RankCommand> ranks;
  os::Clock::Duration grace = std::chrono::seconds(120);
  ProcessId self;  // recorded so that readers can tell whether the supervisor still runs
};

class Supervisor {
 public:
  using Recorder = std::function<void(const JobStatus&)>;
  // The stop request behind a termination signal, if one was written (its grace and
  // reason apply when its generation is this one).
  using StopLookup = std::function<std::optional<StopRequest>()>;

  Supervisor(Launcher& launcher, os::Clock& clock, SupervisorConfig config, Recorder record,
             StopLookup stop_request);

  // Starts the ranks and returns when all of them have ended.
  JobStatus run();

 private:
  void begin_stop(const std::string& why, os::Clock::Duration grace);
  void kill_now(const std::string& why);
  RankStatus* rank_of(pid_t pid);
  void conclude();

  Launcher& launcher_;
  os::Clock& clock_;
  SupervisorConfig config_;
  Recorder record_;
  StopLookup stop_request_;
  JobStatus status_;
  bool stopping_ = false;
  bool killed_ = false;
  os::Clock::TimePoint deadline_{};
  std::string failure_;        // the rank failure blamed, if any
  bool own_failure_ = false;   // failure_ is a rank's own (not a peer lost, exit 69)
  std::string lost_peer_;      // "rank 1 lost a peer (exit status 69)", the first such
  pid_t failed_at_start_ = 0;  // the rank whose program could not be executed
  std::string kill_reason_;
  std::string stop_reason_;  // why the ranks were asked to stop
};

// The commands that start `launch`'s ranks (argv, environment, directory, log, header).
std::vector<RankCommand> rank_commands(const JobLaunch& launch);

}  // namespace sia::exec
