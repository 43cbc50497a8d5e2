// The placer: maps an Allocation (job -> n nodes, r GPUs of type t) onto named nodes and
// GPU indices, following the Sia paper's rules (SOSP '23 §3.4):
//   - a job whose GPU type and count did not change keeps its exact GPUs;
//   - whole-node allocations take whole free nodes, scanning from the highest node index;
//   - a partial-node allocation never spans nodes: it goes best-fit (the node with the
//     fewest free GPUs that still holds it, lowest index first) from the other end, in a
//     power-of-two block aligned inside a virtual node when one is free;
//   - single-node jobs are placed largest first; on fragmentation the placer evicts the
//     fewest single-node jobs from one node (never a whole-node job) and re-places them;
//   - a job restarts when its GPUs change (new, moved, resized, or another type).
// `reference_placement` is the published simulator's fast placer instead (jobs sorted by
// GPU count, whole nodes then any free GPUs round-robin from a moving pointer; small jobs
// may span nodes, nothing is preserved), PlacerQuirks::round_robin under --compat reference.
// Thread-safety: pure functions.
#pragma once

#include <optional>

#include "core/allocation.hpp"
#include "core/cluster.hpp"
#include "core/placement.hpp"
#include "place/placer_quirks.hpp"

namespace sia {

Placement place(const Allocation& allocation, const Cluster& cluster,
                const std::optional<Placement>& previous);

// `order` (job names) sets the order jobs are taken in before the stable sort by size (the
// artifact uses its workload order); by default, by name. Each job's nodes are listed in
// the order the placer visited them, which is the artifact's placement tuple.
Placement reference_placement(const Allocation& allocation, const Cluster& cluster,
                              const std::optional<Placement>& previous,
                              const std::vector<std::string>* order = nullptr);

// The placer the quirks pick: reference_placement (with `order`) when round_robin, else
// place().
Placement place(const Allocation& allocation, const Cluster& cluster,
                const std::optional<Placement>& previous, const PlacerQuirks& quirks,
                const std::vector<std::string>* order = nullptr);

// Marks restart on jobs whose GPU set differs from `previous` (or that were not placed).
void mark_restarts(Placement& placement, const std::optional<Placement>& previous);

}  // namespace sia
