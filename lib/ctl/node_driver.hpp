// NodeDriver: how the round engine reaches the nodes. One implementation runs commands
// (CommandDriver: a local sia-run per node for `sia-ctl round`, or ssh); the controller
// daemon implements it on its agents' channel. The round engine calls, once per round,
// observe() and drain_reports() (in that order), nodes_up(), then deliver().
// Documents are sia-run's: a node's status is the data of its RunStatus document, an
// acknowledged delivery carries the data of the RunPlan its apply printed. A Placement's
// GPU type indices refer to the configured cluster (the one the driver was made for).
// Thread-safety: implementations are used from the round engine's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/placement.hpp"

namespace sia::ctl {

struct NodeResult {
  std::string node;
  bool acknowledged = false;
  nlohmann::json plan;    // RunPlan data (actions: job, action, round = generation, ...)
  nlohmann::json status;  // RunStatus data, when the node sent one (else null)
  std::string error;      // why it did not acknowledge
};

struct ReportLine {
  std::string node;
  std::string job;
  std::int64_t offset = 0;  // byte offset of the line in the node's reports file of the job
  std::string line;         // the line, without its newline
  std::int64_t next = 0;    // offset of the following line; 0: offset + line size + 1
};

struct NodeStatus {
  std::string node;
  bool ok = false;
  nlohmann::json status;  // RunStatus data (jobs: name, state, round, exit_status, reason...)
  std::string error;
};

class NodeDriver {
 public:
  virtual ~NodeDriver() = default;
  // Nodes that can take work now (up, not fenced).
  virtual std::vector<std::string> nodes_up() = 0;
  // Sends every node its Placement (the whole jobs of the placement that touch the node,
  // so rank numbering and MASTER_ADDR agree) and the Jobs document with their commands;
  // nodes with nothing get an empty placement (they stop what they run). Returns per node
  // whether it acknowledged, and its RunPlan/RunStatus when it did.
  virtual std::vector<NodeResult> deliver(std::int64_t round, const Placement& placement,
                                          const nlohmann::json& jobs_doc) = 0;
  // New report lines since the last call: {node, job, offset, line}.
  virtual std::vector<ReportLine> drain_reports() = 0;
  // What each reachable node runs (sia-run RunStatus per node).
  virtual std::vector<NodeStatus> observe() = 0;
  // After observe(): whether it learned nothing of any node because what manages them did
  // not answer (slurmctld down) -- the nodes and their jobs may well run on, so the round
  // decides and delivers nothing and the last placement stands. Agents and node commands
  // answer for themselves: never blind.
  virtual bool blind() const { return false; }
  // The book forgot these ended jobs (controller.history_days): the driver drops what it
  // keeps of them in the state directory. Agents and node commands keep nothing.
  virtual void forget(const std::vector<std::string>& jobs) { (void)jobs; }
};

}  // namespace sia::ctl
