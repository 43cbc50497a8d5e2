// The reservations (round/reservations.hpp) in the simulator: each round, the nodes they
// hold are chosen (round/take_back.hpp: last round's placement says which nodes are in use)
// and kept out of what the policy and placer see; the jobs on a node taken back leave it
// by the next placement (a restart from their checkpoint, as any move). Per round it
// counts the GPUs lent to training (owned by reservations, not held), the take-backs
// (nodes taken back while a job ran on them) and the GPUs in use on them.
// Thread-safety: one simulation's, not shared.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "round/reservations.hpp"

namespace sia {

struct LendingRound {
  Cluster cluster;                    // the cluster less the reserved nodes (types kept)
  std::optional<Placement> previous;  // the previous placement less jobs on reserved nodes
  int lent_gpus = 0;
  int take_backs = 0;
  int taken_back_gpus = 0;
};

class SimReservations {
 public:
  SimReservations(std::vector<Reservation> reservations, const Cluster& cluster);
  // The round at time `now`: `previous` the last placement, `active` the jobs it schedules
  // (a job placed last round that has ended since is not taken back).
  LendingRound round(double now, const std::optional<Placement>& previous,
                     const std::set<std::string>& active);

 private:
  std::vector<Reservation> reservations_;
  const Cluster& cluster_;
  std::set<std::string> reserved_;  // last round's
};

}  // namespace sia
