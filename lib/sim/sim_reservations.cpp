#include "sim/sim_reservations.hpp"

#include "round/take_back.hpp"

namespace sia {

SimReservations::SimReservations(std::vector<Reservation> reservations, const Cluster& cluster)
    : reservations_(std::move(reservations)), cluster_(cluster) {}

LendingRound SimReservations::round(double now, const std::optional<Placement>& previous,
                                    const std::set<std::string>& active) {
  const ReservedNodes held = reserved_nodes(reservations_, cluster_, now);
  std::vector<NodeUse> uses;
  if (previous) {
    for (const auto& j : previous->jobs) {
      if (!active.count(j.job)) continue;
      for (const auto& n : j.nodes)
        uses.push_back({n.node, j.job, static_cast<int>(n.gpus.size())});
    }
  }
  const ReservedChoice choice = choose_reserved(cluster_, held.held, reserved_, uses);
  reserved_ = choice.nodes;
  LendingRound out;
  out.cluster = cluster_lending(cluster_, reserved_);
  out.lent_gpus = held.lent_gpus(cluster_);
  for (const auto& tb : choice.taken_back) {
    ++out.take_backs;
    out.taken_back_gpus += tb.gpus;
  }
  if (previous) {
    out.previous = *previous;
    std::vector<JobPlacement> kept;
    for (const auto& j : previous->jobs) {
      bool off = true;
      for (const auto& n : j.nodes) off = off && !reserved_.count(n.node);
      if (off) kept.push_back(j);
    }
    out.previous->jobs = std::move(kept);
  }
  return out;
}

}  // namespace sia
