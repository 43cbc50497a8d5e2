// The controller's reservations (round/reservations.hpp, controller.reservations): the
// nodes a round keeps out of training, chosen by round/take_back.hpp from what the book
// remembers of the last round -- its cluster (a configured node missing from it was
// reserved, or down) and its placement (which jobs ran where).
// Thread-safety: a pure function.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/cluster.hpp"
#include "round/reservations.hpp"
#include "round/take_back.hpp"

namespace sia::ctl {

// The nodes reserved at `now`: `last_cluster` and `last_placement` the book's (null before
// the first round), `active` the jobs still active (one that ended is not taken back).
ReservedChoice reserve_from_book(const std::vector<Reservation>& reservations,
                                 const Cluster& cluster, double now,
                                 const nlohmann::json& last_cluster,
                                 const nlohmann::json& last_placement,
                                 const std::set<std::string>& active);

}  // namespace sia::ctl
