// HubDriver: the controller daemon's NodeDriver (lib/ctl/node_driver.hpp) on the control
// channel's Hub (lib/channel/hub.hpp). It promises:
//   - nodes_up(): the cluster's nodes whose agent said READY and is not fenced -- an agent
//     that went silent keeps its node (and its jobs) until the hub fences it, so its jobs
//     are never started twice; once fenced they are rescheduled by the next round;
//   - after a controller restart, the nodes in `hold` (those the last placement used) count
//     as up, holding their jobs, each for its seconds (restart_hold: the silence limit of
//     the lease its agent said before the restart) unless their agent comes back first:
//     one that does not come back is treated as fenced only then;
//   - the lease of each READY is remembered in `leases` (LeaseMemory), for the next start;
//   - deliver(): every node of the cluster gets an ASSIGN with the jobs of the placement
//     that touch it (whole jobs, so rank numbering and MASTER_ADDR agree) and their
//     JobSpecs; a node with nothing gets an empty placement and stops what it runs. A job
//     that starts a new generation across nodes (ctl/stop_first.hpp: it moves, grows,
//     shrinks, or takes a new shape on several nodes) is stopped on every node that runs
//     it and started on its nodes only after they all acknowledged that (two phases), so
//     it resumes from the checkpoint its old workers wrote and never runs twice at once,
//     not even on one node while another still stops it; a job is also held back while
//     any node it was sent to has not
//     acknowledged its latest ASSIGN (a slow apply may still be starting it there).
//     deliver() waits, pumping the hub, until every connected node
//     acknowledged or `ack_timeout` passed; an ACK that comes later is handed to
//     on_late_ack;
//   - drain_reports(): the report lines the hub handed out since the last call (none when
//     on_reports takes them as they arrive, which is how `serve` journals them at once);
//   - observe(): each node's sia-run RunStatus as its agent last sent it, with the job
//     states of its latest HEARTBEAT laid over it (so a finished job is seen at once).
//     A node speaks only for the jobs it was sent: once it has had an ASSIGN from this
//     controller, what it says of any job neither an ASSIGN since the start nor `given`
//     (what earlier controllers placed there, from the journal) gave it is left out (of
//     observe() and of where deliver() takes a job to run); before that, after a restart,
//     its word stands (the round engine still takes run states only from nodes the job
//     was placed on).
// Every hub event (reports, ACKs, READY, refusals...) goes through pump(), which the
// daemon's loop calls between rounds and deliver() calls while it waits.
// Time (the ACK wait, the hold) is read from options.clock.
// Thread-safety: one thread (the daemon's loop) calls everything.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "channel/hub.hpp"
#include "channel/lease_memory.hpp"
#include "channel/timing.hpp"
#include "core/cluster.hpp"
#include "ctl/node_driver.hpp"
#include "os/clock.hpp"

namespace sia::serve {

struct HubDriverOptions {
  double ack_timeout = channel::kChannelTiming.ack_timeout;  // seconds deliver() waits for ACKs
  // New report lines as they arrive (journal them before the next pump); null: buffered
  // for drain_reports().
  std::function<void(std::vector<ctl::ReportLine>)> on_reports;
  // An ACK that came after deliver() stopped waiting for it.
  std::function<void(const std::string& node, const channel::Ack&)> on_late_ack;
  // Every other event (ready, up, down, fenced, bye, refused), for logs and the loop.
  std::function<void(const channel::HubEvent&)> on_event;
  std::function<bool()> interrupted;            // true: deliver() stops waiting (a signal)
  std::function<void(const std::string&)> log;  // lines for people; null: none
  // The nodes that held jobs when the controller started, and for how many seconds from
  // then each counts as holding them while its agent is not back (restart_hold).
  std::map<std::string, double> hold;
  // Per node, the live jobs earlier controllers placed there (the journal's placements):
  // one may have finished or still be stopping there, and its word on them counts.
  std::map<std::string, std::set<std::string>> given;
  channel::LeaseMemory* leases = nullptr;  // where READYs' leases are kept; null: nowhere
  // The time ack_timeout and the holds are measured on; null: the system clock. Tests
  // pass a fake so that no test waits on the wall clock.
  os::Clock* clock = nullptr;
};

class HubDriver : public ctl::NodeDriver {
 public:
  // `cluster` is the configured cluster: a Placement's GPU type indices refer to it.
  HubDriver(channel::Hub& hub, Cluster cluster, HubDriverOptions options);

  std::vector<std::string> nodes_up() override;
  std::vector<ctl::NodeResult> deliver(std::int64_t round, const Placement& placement,
                                       const nlohmann::json& jobs_doc) override;
  std::vector<ctl::ReportLine> drain_reports() override;
  std::vector<ctl::NodeStatus> observe() override;

  // Waits up to `timeout` for hub traffic and handles it.
  void pump(std::chrono::milliseconds timeout);

  // Seconds the last deliver() spent waiting for ACKs.
  double last_deliver_seconds() const { return last_deliver_; }

 private:
  void handle(std::vector<channel::HubEvent> events);
  // True while `node` is held: in `hold`, not heard since the start, within its seconds.
  bool held(const std::string& node);
  // The agent's merged status, less the jobs neither an ASSIGN nor `given` gave its node.
  nlohmann::json own_status(const channel::AgentView& a) const;
  // Sends each node in `parts` its ASSIGN and waits for the ACKs (results by node).
  void send_and_wait(std::int64_t round, const std::map<std::string, nlohmann::json>& parts,
                     const nlohmann::json& jobs_doc, os::Clock::TimePoint deadline,
                     std::map<std::string, ctl::NodeResult>& results);

  channel::Hub& hub_;
  Cluster cluster_;
  HubDriverOptions options_;
  os::Clock& clock_;
  std::vector<ctl::ReportLine> buffered_;
  // ASSIGNs deliver() waits for: node -> (round, seq), and the ACKs that came.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> awaited_;
  std::map<std::string, channel::Ack> acks_;
  // Per node, the jobs of the ASSIGNs sent since its last acknowledged one, and the
  // latest's (round, seq): until that ACK the node may be starting any of them, so none
  // starts elsewhere.
  struct Unsettled {
    std::pair<std::int64_t, std::int64_t> latest;
    std::set<std::string> jobs;
  };
  std::map<std::string, Unsettled> unsettled_;
  double last_deliver_ = 0;
  std::set<std::string> seen_;  // nodes whose agent said READY since the start
  // Per node, every job an ASSIGN since the start or `given` gave it (bounded by the jobs
  // placed), and the nodes this controller has sent an ASSIGN.
  std::map<std::string, std::set<std::string>> sent_;
  std::set<std::string> assigned_;
  os::Clock::TimePoint start_;
};

// What a controller restarted with hub options `ho` holds `nodes` (the last placement's)
// for: by node, the silence limit of its lease before its READY (lease_before_ready, with
// ho.remembered), in seconds.
std::map<std::string, double> restart_hold(const std::set<std::string>& nodes,
                                           const channel::HubOptions& ho);

// The jobs of a Placement document's data that touch `node`, as a Placement document.
nlohmann::json placement_for_node(const nlohmann::json& placement_data, const std::string& node,
                                  std::int64_t round);
// The Jobs document with only the jobs named in `placement_data`.
nlohmann::json jobs_for_placement(const nlohmann::json& jobs_doc,
                                  const nlohmann::json& placement_data);

}  // namespace sia::serve
