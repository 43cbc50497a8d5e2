// SiaRunNode: the NodeBackend of `sia-run agent` -- the node's sia-run state directory,
// changed only by running the `sia-run apply` program as a child (the ASSIGN's placement
// and jobs written to STATE/agent/ first), so that the agent never holds the state lock
// itself and an apply it started finishes even if the agent dies. Stopping every job is
// an apply of an empty placement: the jobs are checkpoint-stopped but not held, so a later
// placement on this node resumes them. An apply that finds the state directory locked
// (status 75) is retried a few times before it counts as failed. Reads (RunStatus, report
// lines, rank logs) go to the state directory directly.
//   STATE/agent/placement.json, jobs.json   what the running apply reads
//   STATE/agent/apply.out, apply.err        its standard output and error
// Thread-safety: one thread (the agent's loop).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "channel/node_backend.hpp"
#include "exec/state_dir.hpp"
#include "os/clock.hpp"
#include "os/spawn.hpp"

namespace sia::channel {

struct SiaRunNodeOptions {
  std::string sia_run;    // the program; "" = sia-run next to /proc/self/exe
  std::string state_dir;  // sia-run's state directory (absolute or relative to the cwd)
  std::string node;
  std::string cluster;                  // "" = none (nodes from the placement)
  std::vector<std::string> apply_args;  // more flags for apply (--grace 60, ...)
  int lock_retries = 5;                 // applies that found the state directory locked
  std::function<void(const std::string&)> log;
};

class SiaRunNode : public NodeBackend {
 public:
  explicit SiaRunNode(SiaRunNodeOptions options);

  void begin_apply(const nlohmann::json& placement, const nlohmann::json& jobs) override;
  void begin_stop_all(const std::string& reason) override;
  bool busy() override;
  std::optional<Outcome> take_outcome() override;
  nlohmann::json run_status() override;
  std::vector<ReportLine> read_reports(const Offsets& from, std::size_t max_bytes_per_job,
                                       Offsets& next) override;
  Offsets report_ends() override;
  nlohmann::json read_log(const exec::LogRequest& request) override;  // node_logs.cpp

  // The empty Placement document a stop applies.
  static nlohmann::json empty_placement();

 private:
  void start(Op op, const nlohmann::json& placement, const nlohmann::json& jobs);
  void spawn();
  void finish(int status);

  SiaRunNodeOptions opt_;
  exec::StateDir state_;
  std::string work_dir_;
  std::vector<std::string> argv_;  // the running operation's command
  Op op_ = Op::apply;
  std::optional<os::Process> child_;  // the running `sia-run apply`
  int tries_ = 0;
  os::Clock::TimePoint retry_at_{};
  bool retry_waiting_ = false;
  std::optional<Outcome> outcome_;
  std::set<std::string> warned_;
};

}  // namespace sia::channel
