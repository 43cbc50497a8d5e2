// CommandDriver: a NodeDriver that reaches each node by running a command per node and
// round -- the [nodes] templates of sia-config(5). The default templates run a local
// sia-run per node with its own state directory, STATE/nodes/NODE, and checkpoints shared
// under STATE/ckpt (so a job moved between nodes resumes), so one machine can play a
// whole cluster; `ssh {address} sia-run ...` templates reach real nodes.
//   status   per node, once per round: prints a RunStatus document; a node whose status
//            command fails (or prints no RunStatus) is down for the round
//   reports  per node that is up: prints report lines (`sia-run reports -o jsonl`); the
//            driver appends `--after JOB=OFFSET` for every job whose reports from that
//            node it has read up to OFFSET
//   logs     on demand (`sia-ctl logs`), on the node that holds a rank: prints a RunLog
//            document; the driver appends sia-run logs's JOB --rank N ... -o json
//   apply    per node that is up: the Placement on standard input; prints a RunPlan.
//            A running job that starts a new generation across nodes (ctl/stop_first.hpp:
//            a move, growth or shrink across nodes, a new shape on several nodes) is
//            delivered in two phases: first a placement without it to every node (its old
//            nodes checkpoint-stop it), then, once all its old nodes and all its new ones
//            acknowledged that, the whole placement to the nodes it goes to -- so it
//            resumes from the checkpoint its old workers wrote and two generations never
//            run at once. Its RunPlan actions are both phases'.
// Placeholders in every argument: {state} (the controller's state directory), {node},
// {address} (the node's address in the cluster file), {cluster} (the cluster file),
// {jobs} (a Jobs document with the jobs' commands, STATE/run/jobs.json), {placement}
// (the same Placement, STATE/run/placement.json), {round}.
// Nodes' commands run in parallel, each with the [nodes] timeout, and each node command's
// standard output is read up to kMaxNodeOutputMiB: past that the command is stopped.
// A node whose command fails, times out, prints too much, or prints what does not parse
// (nothing at all, where a document is expected) has failed for this round -- its error
// names it (NodeStatus::error, NodeResult::error, a warning for reports) -- and the other
// nodes are scheduled as usual.
// Thread-safety: one thread calls it; it starts its own threads per call.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "ctl/config.hpp"
#include "ctl/node_driver.hpp"

namespace sia::ctl {

// The most a node command may print on standard output (sia-config(5), [nodes]).
inline constexpr std::size_t kMaxNodeOutputMiB = 64;

using ReportOffsets = std::map<std::pair<std::string, std::string>, std::int64_t>;

class CommandDriver : public NodeDriver {
 public:
  // `cluster` is the configured cluster (a placement's type indices refer to it);
  // `offsets` gives, when reports are drained, how far each (node, job) has been read.
  CommandDriver(Cluster cluster, std::string cluster_file, std::string state_dir,
                NodeCommandSettings templates, std::function<ReportOffsets()> offsets);

  std::vector<std::string> nodes_up() override;
  std::vector<NodeResult> deliver(std::int64_t round, const Placement& placement,
                                  const nlohmann::json& jobs_doc) override;
  std::vector<ReportLine> drain_reports() override;
  std::vector<NodeStatus> observe() override;

  // Runs the logs command on `node` with `args` appended and returns its RunLog data.
  // A refusal (status 64 or 66) is passed on with the command's own message; any other
  // failure is status 69 naming the node.
  nlohmann::json read_log(const std::string& node, const std::vector<std::string>& args);

  // Warnings of the last call (a report line that did not read, a node that failed).
  std::vector<std::string> take_warnings();

 private:
  std::vector<std::string> expand(const std::vector<std::string>& tmpl, const ClusterNode& node,
                                  std::int64_t round) const;
  // Runs fn(node index) for the given nodes, a few at a time.
  void for_nodes(const std::vector<std::size_t>& nodes,
                 const std::function<void(std::size_t)>& fn) const;

  Cluster cluster_;
  std::string cluster_file_;
  std::string state_dir_;
  NodeCommandSettings templates_;
  std::function<ReportOffsets()> offsets_;
  bool observed_ = false;
  std::set<std::string> up_;
  std::map<std::string, std::set<std::string>> running_on_;  // job -> nodes, by status
  std::vector<std::string> warnings_;
};

// "{node}" etc. replaced in one argument.
std::string expand_placeholders(const std::string& arg,
                                const std::map<std::string, std::string>& values);

}  // namespace sia::ctl
