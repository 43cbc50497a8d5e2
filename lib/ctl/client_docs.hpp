// The documents the client subcommands print, built from a JobBook (and the requests still
// waiting in the inbox) -- by the local backend, and by the controller daemon to answer a
// remote client the same way:
//   JobStatusList  {"jobs": [{name, state, identity, submitted, age, gpu_type, nodes, gpus,
//                  batch_size, local_bsz, accum_steps, restarts, progress, step,
//                  lost_steps, notice, silent_for, reports, reason, exit_status, ended}]},
//                  jobs by name; state is also "submitted" (in the inbox) or "rejected"
//   NodeList       {"nodes": [{name, gpu_type, gpus, address, state: up|down|unknown,
//                  last_seen, error, delivery_error, jobs: ["JOB:GPUS"...]}]}
//   JobExplanation {job, state, round, placement, queue_position, waiting, allocation,
//                  note, lines: [...]} -- why the job runs where it runs or why it waits,
//                  from the last round's allocation (with explanations) and placement;
//                  a failed job whose node said which rank failed also has log_tail
//                  {node, rank, text}: the last lines of that rank's log
// Times are seconds since the epoch (sia-ctl prints them for people in the tables).
// Thread-safety: pure, but for pending_requests(), which reads the inbox.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctl/job_book.hpp"
#include "ctl/state_store.hpp"

namespace sia::ctl {

struct PendingRequest {
  std::string type;  // submit | cancel
  std::string identity;
  double time = 0;
  std::vector<std::string> jobs;
};

// The requests waiting in STATE/inbox (local clients' submissions and cancellations), in
// file order. A file a round took in meanwhile, or a malformed one, is left out (the
// round reports it). Reads files: not pure.
std::vector<PendingRequest> pending_requests(const StateStore& store);

// Status 66 for a named job that is neither known nor pending. A running job whose workers
// have been quiet for more than `silent_after` seconds (controller.silent_after) is flagged
// silent (its reason, and a line of its explanation).
nlohmann::json job_status_list(const JobBook& book, const std::vector<PendingRequest>& pending,
                               const std::vector<std::string>& jobs, double now,
                               double silent_after);
nlohmann::json node_list(const JobBook& book, double now);
nlohmann::json job_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                               const std::string& job, double now, double silent_after);

// An envelope around `data`.
nlohmann::json envelope(const std::string& kind, const nlohmann::json& data);

}  // namespace sia::ctl
