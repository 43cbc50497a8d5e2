// Reservations for other work (issue 34, item 4; format in sia-formats(5) RESERVATIONS):
// per GPU type, GPUs that a site keeps for inference or maintenance and lends to training
// only while it does not need them. A reservation owns `gpus` GPUs of one type and, at a
// time t, holds
//   - its `gpus` inside its `daily` UTC window ("08:00-20:00"; "20:00-08:00" wraps past
//     midnight),
//   - the `gpus` of its last step with at <= t (none before the first step),
// whichever is more; with neither a window nor steps it holds all its GPUs always. The
// GPUs held are counted in whole nodes of its type (rounded up, per type over all its
// reservations); training is lent the owned nodes not held. Times: `at` is seconds since
// the Unix epoch for the controller, since the trace's start for the simulator (whose
// time 0 is midnight UTC).
// Thread-safety: plain values and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/node.hpp"

namespace sia {

struct ReservationStep {
  double at = 0;  // seconds (see above)
  int gpus = 0;   // held from `at` on, 0 <= gpus <= the reservation's gpus
};

struct Reservation {
  std::string gpu_type;
  int gpus = 0;                        // owned, >= 1
  std::optional<int> daily_start;      // seconds after midnight UTC
  std::optional<int> daily_end;        // both set or neither; start != end
  std::vector<ReservationStep> steps;  // ascending `at`
};

// The GPUs `r` holds at time `t`.
int held_gpus(const Reservation& r, double t);

// Per GPU type of `cluster` (its order): the nodes its reservations own, and those they
// hold at time `t` (both in whole nodes, rounded up).
struct ReservedNodes {
  std::vector<int> owned;
  std::vector<int> held;
  int lent_gpus(const Cluster& cluster) const;  // GPUs of owned nodes not held
};
ReservedNodes reserved_nodes(const std::vector<Reservation>& reservations, const Cluster& cluster,
                             double t);

// Per GPU type of `cluster` (its order): the most nodes its reservations hold at any time
// in [from, to] (`from` alone when to <= from) -- what training cannot count on over that
// span. Exact: the holding only grows at a step or at a window's start, and between two
// steps a window repeats daily, so those instants within a day of each step are weighed.
std::vector<int> most_held_nodes(const std::vector<Reservation>& reservations,
                                 const Cluster& cluster, double from, double to);

// Per GPU type of `cluster` (by name): its GPUs less those of most_held_nodes over
// [from, to] -- the GPUs a guaranteed job admitted at `from` and due at `to` can count on
// (ctl/admission.hpp, sim/deadlines.hpp).
std::map<std::string, int> gpus_unreserved(const std::vector<Reservation>& reservations,
                                           const Cluster& cluster, double from, double to);

// A Reservations document's data (a TOML file of [[reservation]] tables, or its JSON twin):
// each field checked against `cluster` (a known GPU type; per type the GPUs owned within
// its capacity); an error names the file and field with the Node's status.
std::vector<Reservation> parse_reservations(const Node& data, const Cluster& cluster);
// Reads FILE; errors exit 78 (a configuration file).
std::vector<Reservation> read_reservations(const std::string& file, const Cluster& cluster);

}  // namespace sia
