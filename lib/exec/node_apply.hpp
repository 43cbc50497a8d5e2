// The steps `sia-run apply` and `sia-run run` share: read what the placement asks of this
// node (placement, job specs, cluster; every input is validated before anything is done)
// and make the node run it -- wait for jobs already stopping, reconcile, checkpoint-stop
// what moved away or changed, then start the new generations.
// Thread-safety: one thread; apply_node() expects the state directory's lock held.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/tool.hpp"
#include "exec/executor.hpp"
#include "exec/node_plan.hpp"
#include "exec/reconcile.hpp"

namespace sia::exec {

// What every sia-run command reads: its state directory, output format, --dry-run.
struct CommonArgs {
  std::string state_dir;  // empty: default_state_dir()
  cli::Format format = cli::Format::json;
  bool dry_run = false;
};

// What `sia-run apply` and `run` are asked to do.
struct ApplyArgs : CommonArgs {
  std::string placement = "-";
  std::string node;  // empty: the host name
  std::vector<std::string> jobs;
  std::string cluster;  // empty: nodes and addresses from the placement itself
  std::string port_range = "29500-29999";
  GenerationSettings settings;  // ckpt_root, report_interval, grace (the rest is filled in)
};

// "LO-HI" -> {LO, HI}; status 64 unless 1 <= LO <= HI <= 65535.
std::pair<int, int> parse_port_range(const std::string& text);

struct NodeWork {
  std::string node;
  std::vector<JobLaunch> wanted;    // the jobs placed on this node
  std::set<std::string> elsewhere;  // jobs the placement has on other nodes only
  GenerationSettings settings;      // complete (cwd, ports, probes)
  int round = 0;                    // the placement's metadata.round (sia-ctl's), 0: none
};

// Status 64 (a bad flag value), 65 (a bad placement or job spec), 66 (a missing input),
// 78 (a bad cluster file, or a node that is not in it).
NodeWork read_node_work(const ApplyArgs& args);

// What reconciling `work` with the state directory gives, without acting.
std::vector<PlannedAction> plan_node_actions(const NodeWork& work, const StateDir& state,
                                             Mode mode);

// Acts; returns the actions taken. Supervisors are detached (apply) or children of the
// caller (run).
std::vector<PlannedAction> apply_node(const NodeWork& work, StateDir& state, Executor& executor,
                                      Mode mode, bool detached);

std::string host_name();

}  // namespace sia::exec
