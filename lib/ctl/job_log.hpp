// A job's rank logs as the controller finds them: which node holds a rank's log (the
// job's placement in the JobBook -- its current one, else the last it ran with -- gives
// the nodes in rank order, one rank per GPU), the `sia-run logs` arguments that read a
// part of it, and the JobLog document `sia-ctl logs` prints:
//   JobLog {job, rank, node, state (the job's lifecycle state), run_state (the job's
//          state on that node, as sia-run says it: running, ..., finished, failed; null
//          when it did not say), offset, next, size, truncated, text} -- the part of the
//          rank's log read (at most 1 MiB, see lib/exec/rank_log.hpp), offsets in bytes of
//          the log file on that node
// A follower stops once the job ended (ranks_ended), not only once a round saw it end.
// Used by the local client backend and by the controller daemon for remote clients.
// Thread-safety: pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/client_docs.hpp"
#include "ctl/job_book.hpp"

namespace sia::ctl {

struct LogQuery {
  std::string job;
  int rank = 0;
  int tail = -1;            // >= 0: the last `tail` lines; else the bytes from `offset` on
  std::int64_t offset = 0;  // with tail < 0
};

struct RankLogSource {
  std::string node;  // the node that holds the rank's log
  Lifecycle state = Lifecycle::queued;
  bool node_down = false;   // the last round found the node down (only with down_ok)
  std::string down_reason;  // what that round said of it ("" : nothing)
};

// Where the rank's log is. Status 66 for a job neither known nor pending ("not known"),
// or one that never started ("no log yet"); 64 for a rank outside the job's ranks; 69 for
// a node the last round found down (naming it) -- unless `down_ok` (the log is on storage
// the controller reads itself): then node_down says so.
RankLogSource locate_rank_log(const JobBook& book, const std::vector<PendingRequest>& pending,
                              const LogQuery& query, bool down_ok = false);

// sia-run logs's arguments for the query: JOB --rank N (--tail N | --offset B) -o json.
std::vector<std::string> sia_run_log_args(const LogQuery& query);

// Whether a JobLog's job has ended for good: its lifecycle state is an ended one, or its
// node says its ranks ended so (finished, failed), which the next round takes in.
bool ranks_ended(const nlohmann::json& job_log_data);

// The JobLog envelope of what the node's `sia-run logs -o json` answered (RunLog data).
nlohmann::json job_log_document(const LogQuery& query, const RankLogSource& source,
                                const nlohmann::json& run_log);

}  // namespace sia::ctl
