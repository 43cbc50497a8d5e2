// LOGS requests of remote clients (`sia-ctl logs --connect`), as the controller daemon
// plans them for its hub (channel::Hub::set_log_planner): where the rank's log is, from
// the daemon's JobBook (lib/ctl/job_log.hpp); which part of it the agent of that node reads
// (at most 1 MiB); and how the agent's RunLog data becomes the client's JobLog document.
//   LOGS {"job": name, "rank": N (default 0), "tail": N (default -1: from offset),
//         "offset": BYTES (default 0)}
// Refusals are thrown as sia::Error: 65 malformed arguments, 66 an unknown job or one that
// never started, 64 a rank out of range, 69 a node the last round found down, 77 a job
// another client submitted (serve/client_service.hpp's require_owner).
// Thread-safety: one thread (the hub's poll(), inside the daemon's loop).
#pragma once

#include "channel/hub.hpp"
#include "ctl/job_book.hpp"
#include "ctl/state_store.hpp"

namespace sia::serve {

channel::DeferredLog plan_log_request(const ctl::JobBook& book, const ctl::StateStore& store,
                                      const channel::Identity& who,
                                      const channel::Request& request);

}  // namespace sia::serve
