// Slurm's nodes as `scontrol -d -o show node` prints them (one node a line): name,
// address, state and its flags, partitions, GPUs configured (Gres) and in use (GresUsed).
// parse_nodes takes any text: a malformed line is one Error(data) naming the line and the
// field, never a crash. `usable()` says whether sia may offer the node.
// Thread-safety: pure functions, plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "slurm/slurm_fields.hpp"

namespace sia::slurm {

struct SlurmNode {
  std::string name;
  std::string address;                  // NodeAddr (the name when absent)
  std::string state;                    // the base state: IDLE, MIXED, DOWN...
  std::vector<std::string> flags;       // DRAIN, NOT_RESPONDING, ...
  std::vector<std::string> partitions;  // Partitions=a,b
  std::vector<GpuGres> gpus;            // Gres=
  std::vector<GpuGres> gpus_used;       // GresUsed= (needs scontrol -d)

  bool has_flag(std::string_view flag) const;
  // Up and taking jobs: IDLE, MIXED, ALLOCATED or COMPLETING, and no DRAIN, FAIL,
  // NOT_RESPONDING, MAINTENANCE, power-saving, reboot or invalid-registration flag.
  bool usable() const;
  bool in_partition(const std::string& partition) const;  // "" is every partition
  long gpu_total() const;
  long gpu_used() const;
};

// The argv (after the command's name) that prints what parse_nodes reads.
std::vector<std::string> show_nodes_args();
std::vector<SlurmNode> parse_nodes(std::string_view text);

}  // namespace sia::slurm
