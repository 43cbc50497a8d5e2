// What the Themis policy keeps between rounds (its policy_state): per job the contention
// sum and rounds counted for N_avg and the lease it holds, and where the last answer was
// placed. The text is JSON: {"round", "jobs": {name: {"contention_sum", "rounds", "lease":
// {"gpu_type", "nodes", "gpus", "start", "end", "payment", "how"}}}, "placement"}; "end" is
// the first round in which the lease no longer holds, "how" auction | leftover | pinned,
// "placement" the Placement document's data of the last answer. Reading it back checks
// every field and throws sia::Error (data) naming the one that is wrong.
// Thread-safety: pure functions over values.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/cluster.hpp"
#include "core/placement.hpp"

namespace sia::themis {

struct Lease {
  std::string gpu_type;
  int nodes = 0;
  int gpus = 0;
  long long start = 0;  // the round it was granted in
  long long end = 0;    // the first round in which it is free again
  double payment = 1;   // c_i
  std::string how;      // auction | leftover | pinned
};

struct Memory {
  double contention_sum = 0;
  long long rounds = 0;
  std::optional<Lease> lease;
};

struct State {
  long long round = 0;
  std::map<std::string, Memory> jobs;
  std::optional<Placement> placement;  // where the last answer was placed (the check)
};

std::string state_to_text(const State& s, const Cluster& cluster);
// Read through Node's checked accessors: the state comes back from a file (sia-solve
// --previous), so a count out of range is bad data, never a cast out of range.
State state_from_text(const std::string& text, const Cluster& cluster);

}  // namespace sia::themis
