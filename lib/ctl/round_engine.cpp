#include "ctl/round_engine.hpp"

#include "ctl/report_records.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "core/error_list.hpp"
#include "ctl/book_reservations.hpp"
#include "ctl/job_requests.hpp"
#include "ctl/node_outputs.hpp"
#include "ctl/peers_lost.hpp"
#include "ctl/stages.hpp"
#include "ctl/submission.hpp"
#include "exec/job_status.hpp"
#include "model/catalog.hpp"
#include "os/atomic_file.hpp"
#include "policy/successive_halving.hpp"
#include "round/app_phase.hpp"
#include "round/previous.hpp"
#include "round/round_driver.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

json placement_jobs_only(const json& placement, const std::set<std::string>& keep) {
  json p = placement.is_object() ? placement : json::object();
  json jobs = json::array();
  if (p.contains("jobs") && p["jobs"].is_array()) {
    for (const auto& j : p["jobs"]) {
      if (j.is_object() && j.contains("name") && j["name"].is_string() &&
          keep.count(j["name"].get<std::string>())) {
        jobs.push_back(j);
      }
    }
  }
  p["jobs"] = jobs;
  return p;
}

}  // namespace

double wall_clock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Cluster cluster_without_down(const Cluster& cluster, const std::vector<std::string>& up) {
  std::set<std::string> ok(up.begin(), up.end());
  Cluster c;
  c.name = cluster.name;
  c.description = cluster.description;
  std::set<std::string> used_types;
  std::size_t node = 0;
  for (const auto& g : cluster.groups) {
    NodeGroup ng = g;
    ng.names.clear();
    ng.addresses.clear();
    for (int k = 0; k < g.count; ++k, ++node) {
      const ClusterNode& n = cluster.nodes[node];
      if (!ok.count(n.name)) continue;
      ng.names.push_back(n.name);
      ng.addresses.push_back(n.address);
    }
    ng.count = static_cast<int>(ng.names.size());
    if (ng.count == 0) continue;
    used_types.insert(ng.gpu_type);
    c.groups.push_back(std::move(ng));
  }
  for (const auto& t : cluster.types) {
    if (used_types.count(t.name)) c.types.push_back(t);
  }
  c.finalize(cluster.name, ExitStatus::software);
  return c;
}

RoundEngine::RoundEngine(const Settings& config, Cluster cluster, const StateStore& store,
                         NodeDriver& driver, RoundOptions options)
    : config_(config),
      cluster_(std::move(cluster)),
      store_(store),
      driver_(driver),
      options_(std::move(options)),
      foreign_([this](const std::string& w) { warn(w); }) {
  if (!options_.now) options_.now = wall_clock;
}

void RoundEngine::warn(const std::string& w) {
  if (options_.warn) options_.warn(w);
}

void RoundEngine::commit(JobBook& book, std::vector<json> records) {
  if (records.empty()) return;
  if (options_.dry_run) {
    for (const auto& r : records) book.apply(r);
    return;
  }
  store_.commit(book, std::move(records));
}

// One round in progress: what its steps share.
struct RoundEngine::Pass {
  Pass(JobBook& b, double t, const std::string& catalog_dir)
      : book(b), now(t), number(b.round() + 1), catalog(catalog_dir) {}
  JobBook& book;
  const double now;
  const std::int64_t number;
  Catalog catalog;
  json result;
  std::vector<json> records;  // journaled at the end of each step
  json ended = json::array();
  std::vector<NodeStatus> statuses;
  std::map<std::string, std::vector<JobOnNode>> on_nodes;
  std::vector<std::string> up;
  std::set<std::string> up_set;
  bool blind = false;          // the driver learned nothing (NodeDriver::blind): nothing is decided
  std::set<std::string> hung;  // left out: their workers stopped reporting
  std::vector<const BookJob*> active;  // the census's jobs (valid until the stages run)
  Census census;
  std::set<std::string> counted_jobs, counted_apps;  // fairness units active, not scheduled
  std::set<std::string> scheduled;                   // the jobs handed to the stages
  std::vector<Reservation> reservations;             // controller.reservations, read for this round
  std::set<std::string> reserved;                    // nodes kept out of training this round
  std::set<std::string> new_attempts;  // jobs restarted for their lost peers this round
  Cluster up_cluster;   // the configured cluster less the nodes that are down or reserved
  StageOutput out;      // the stages' decision
  json fairness;        // the round record's
  json placement_data;  // the round's placement, scheduled jobs only
  std::map<std::string, std::vector<std::string>> actions_of;  // job -> "node: action"
  json delivered = json::array();
};

// The round's steps in run_round's order: the wall clock, decisions journaled and handed
// to the nodes.
struct RoundEngine::World : RoundWorld {
  World(RoundEngine& engine, Pass& pass) : e(engine), r(pass) {}
  void collect() override {
    e.take_inbox(r);
    e.observe(r);
    e.end_ended(r);
  }
  void app_phases() override { e.schedule_apps(r); }
  Census census() override { return e.census(r); }
  // A blind round (the nodes' manager did not answer) keeps the last decision as it is.
  void schedule(const Census&) override {
    if (!r.blind) e.schedule(r);
  }
  void book_fairness(const Census&) override {
    if (!r.blind) r.fairness = e.round_fairness(r);
  }
  void deliver(const Census&) override {
    if (!r.blind) e.deliver(r);
  }
  void close(const Census&) override { e.summarize(r); }
  RoundEngine& e;
  Pass& r;
};

json RoundEngine::run(JobBook& book) {
  Pass r(book, options_.now(),
         config_.controller.catalog.empty() ? default_catalog_dir() : config_.controller.catalog);
  r.result = {{"round", r.number}, {"cluster", cluster_.name}, {"dry_run", options_.dry_run}};
  // Read each round (an operator may grow a reservation mid-run); a bad file ends the round
  // here, before anything is journaled (78).
  if (!config_.controller.reservations.empty()) {
    r.reservations = read_reservations(config_.controller.reservations, cluster_);
  }
  World world(*this, r);
  run_round(world);
  // 6. Snapshot, without the jobs that ended longer ago than the history keeps them.
  // The driver's state of them goes first: a controller killed in between forgets the same
  // jobs again after its replay.
  if (config_.controller.history_days > 0) {
    const auto gone = book.forget_ended_before(r.now - config_.controller.history_days * 86400);
    if (!options_.dry_run && !gone.empty()) driver_.forget(gone);
  }
  if (!options_.dry_run) store_.compact(book);
  return r.result;
}

void RoundEngine::flush(Pass& r) {
  commit(r.book, std::move(r.records));
  r.records.clear();
}

void RoundEngine::end_job(Pass& r, const std::string& job, Lifecycle state,
                          const std::string& reason, std::optional<int> exit_status,
                          const std::optional<LogTail>& log_tail) {
  r.records.push_back(make_job_ended(job, state, reason, exit_status, r.now, log_tail));
  r.ended.push_back({{"job", job}, {"state", to_string(state)}, {"reason", reason}});
}

// 1. The inbox: submissions and requests on jobs, checked, journaled, their files removed.
void RoundEngine::take_inbox(Pass& r) {
  JobBook& book = r.book;
  json submitted = json::array(), rejected = json::array();
  // Per request, by its past tense ("cancelled", "held", ...): the jobs named.
  json requested = json::object();
  for (auto q : {JobRequest::cancel, JobRequest::hold, JobRequest::release, JobRequest::requeue}) {
    requested[past_tense(q)] = json::array();
  }
  std::vector<std::string> files = store_.inbox_files();
  book.forget_inbox_except({files.begin(), files.end()});
  std::vector<std::string> done_files, rejected_files;
  std::set<std::string> pending;
  for (const auto& f : files) {
    if (book.inbox_seen(f)) {
      done_files.push_back(f);
      continue;
    }
    std::string identity = "?";
    std::vector<std::string> names;
    try {
      json req = store_.read_inbox(f);
      identity = req.value("identity", std::string("?"));
      double time =
          req.contains("time") && req["time"].is_number() ? req["time"].get<double>() : r.now;
      const std::string where = store_.path("inbox/" + f);
      Node jobs = Node(req, where, "").at("jobs");
      if (req["type"] == "submit") {
        Submission sub = parse_submission_body(Node(req, where, ""));
        for (std::size_t i = 0; i < sub.jobs.size(); ++i) {
          const JobSpec& s = sub.jobs[i];
          names.push_back(s.name);
          const std::string at = where + ": jobs[" + std::to_string(i) + "]";
          validate_submission(s, r.catalog, at, job_limits(config_.controller));
          check_admissible(s, r.catalog, cluster_, at);
        }
        validate_apps(sub, where);
        std::vector<std::string> taken = names;
        for (const auto& a : sub.apps) taken.push_back(a.name);
        for (const auto& name : taken) {
          check_name_unused(book, name);
          if (pending.count(name)) {
            throw Error(ExitStatus::data,
                        "\"" + name + "\" is submitted twice (a job name is never reused)");
          }
        }
        pending.insert(taken.begin(), taken.end());
        for (const auto& name : names) submitted.push_back(name);
        r.records.push_back(make_submit(f, identity, time, sub.jobs, sub.apps));
      } else {
        names = jobs.as_strings();
        const JobRequest type = parse_job_request(req["type"].get<std::string>()).value();
        for (const auto& n : names) requested[past_tense(type)].push_back(n);
        r.records.push_back(make_job_request(type, f, identity, time, names));
      }
      done_files.push_back(f);
    } catch (const Error& e) {
      const std::string why = one_line(e.what());  // every mistake, on one line
      warn("inbox/" + f + ": refused: " + why);
      r.records.push_back(make_rejected(f, identity, r.now, names, why));
      rejected.push_back({{"file", f}, {"jobs", names}, {"reason", why}});
      rejected_files.push_back(f);
    }
  }
  flush(r);
  if (!options_.dry_run) {
    for (const auto& f : done_files) store_.remove_inbox(f);
    for (const auto& f : rejected_files) store_.reject_inbox(f);
  }
  r.result["submitted"] = submitted;
  r.result.update(requested);  // "cancelled", "held", "released", "requeued"
  r.result["rejected"] = rejected;
}

// 2. Nodes and their reports.
void RoundEngine::observe(Pass& r) {
  r.statuses = driver_.observe();
  for (const auto& s : r.statuses) {
    // Said once when a node goes down (or is first found down), not every round.
    auto was = r.book.nodes().find(s.node);
    bool was_down = was != r.book.nodes().end() && was->second.last_check > 0 && !was->second.up;
    r.records.push_back(make_node_seen(s.node, s.ok, s.error, r.now));
    if (!s.ok && !was_down) warn("node " + s.node + " is down: " + s.error);
  }
  std::vector<json> reports = report_records(
      r.book, driver_.drain_reports(), r.now, [this](const std::string& w) { warn(w); }, foreign_);
  r.result["reports"] = static_cast<int>(reports.size());
  for (auto& x : reports) r.records.push_back(std::move(x));
  flush(r);
  r.on_nodes = jobs_on_nodes(r.statuses);
  r.up = driver_.nodes_up();
  r.up_set = {r.up.begin(), r.up.end()};
  r.blind = driver_.blind();
}

// Whether a node's failure of a job is a rank that lost a peer (exit 69).
static bool lost_peer(const JobOnNode& x) {
  return x.exit_status == exec::kPeerLostExit;
}

// What a job's failure on one node whose ranks only lost a peer (69) means, by the other
// nodes of its placement.
enum class PeerLoss {
  wait,       // another of its nodes is silent, or its ranks there still run or stop
  node_lost,  // another of its nodes is down (fenced, gone): the job's ranks lost that node
  failed,     // every other node has had its say: the job failed
};

static PeerLoss peer_loss(const BookJob& b, const JobOnNode& failed,
                          const std::vector<NodeStatus>& statuses, const std::set<std::string>& up,
                          const std::vector<JobOnNode>& words) {
  bool wait = false;
  for (const NodeGpus& ng : b.placed->nodes) {
    if (ng.node == failed.node) continue;
    if (!up.count(ng.node)) return PeerLoss::node_lost;
    auto s = std::find_if(statuses.begin(), statuses.end(),
                          [&](const NodeStatus& x) { return x.node == ng.node; });
    wait = wait || s == statuses.end() || !s->ok;
    for (const auto& x : words) {
      wait = wait || (x.node == ng.node &&
                      (x.state == exec::RunState::running || x.state == exec::RunState::stopping));
    }
  }
  return wait ? PeerLoss::wait : PeerLoss::failed;
}

// A job on several nodes whose ranks lost their peers while every node of it was up: a new
// attempt (journaled) while controller.peer_retries allows -- counting the restarts since
// it last made progress (BookJob::peer_retries_used) -- else failed with that reason.
void RoundEngine::peers_lost(Pass& r, const BookJob& b, const JobOnNode& failed) {
  const int retries = config_.controller.peer_retries;
  const std::string what = kPeersLost;
  const std::string since = " since it last trained past where its peers were lost";
  if (b.peer_retries_used >= retries) {
    std::string reason = what + ", " + std::to_string(b.peer_retries_used + 1) + " time(s)" +
                         since + " (controller.peer_retries " + std::to_string(retries) +
                         "); last reported by " + failed.node + ": " + failed.reason;
    end_job(r, b.spec.name, Lifecycle::failed, reason, failed.exit_status, failed.log_tail);
    return;
  }
  const int attempt = b.peer_restarts + 1;
  r.records.push_back(
      make_job_peer_lost(b.spec.name, failed.node, failed.generation, attempt, r.now));
  r.new_attempts.insert(b.spec.name);
  warn("job " + b.spec.name + ": " + what + " (its nodes cannot reach each other?); it " +
       "restarts from its checkpoint as attempt " + std::to_string(attempt) + ", restart " +
       std::to_string(b.peer_retries_used + 1) + " of at most " + std::to_string(retries) + since);
}

// 3. Jobs that ended on their nodes, and queued jobs the cluster can no longer hold.
void RoundEngine::end_ended(Pass& r) {
  for (const BookJob* b : r.book.active()) {
    auto it = r.on_nodes.find(b->spec.name);
    if (it == r.on_nodes.end()) continue;
    const JobOnNode* finished = nullptr;
    const JobOnNode* failed = nullptr;
    bool stopping = false;  // another of its nodes is stopping its ranks: its word comes soon
    for (const auto& x : it->second) {
      if (!node_speaks_for(*b, x.node)) continue;  // a node's word on a job placed elsewhere
      // A lost peer on a node the job has left since (or while it is queued): that
      // generation is over, the job resumes (or resumed) elsewhere.
      if (x.state == exec::RunState::failed && lost_peer(x) && !placed_on(*b, x.node)) continue;
      // A lost peer of a generation the job was already restarted for (job-peer-lost): its
      // nodes start the next attempt.
      if (x.state == exec::RunState::failed && lost_peer(x) &&
          x.generation <= b->peer_lost_generation) {
        continue;
      }
      if (x.state == exec::RunState::finished && !finished) finished = &x;
      // A node whose rank failed by itself is blamed before one whose rank lost it (69).
      if (x.state == exec::RunState::failed && (!failed || (lost_peer(*failed) && !lost_peer(x))))
        failed = &x;
      stopping = stopping || x.state == exec::RunState::stopping;
    }
    if (!finished && failed && lost_peer(*failed)) {
      // Not the job's failure while another of its nodes may still say why (its ranks
      // stop, or it is silent), nor when that node is down: the job resumes from its
      // checkpoint where the next placement puts it (without the down node).
      const PeerLoss loss =
          stopping ? PeerLoss::wait : peer_loss(*b, *failed, r.statuses, r.up_set, it->second);
      if (loss == PeerLoss::wait) continue;
      if (loss == PeerLoss::node_lost) {
        warn("job " + b->spec.name + ": its ranks on " + failed->node +
             " lost a peer on a node that is down; it resumes from its checkpoint");
        continue;
      }
      // Every node of it up and every rank that failed lost its peer: its nodes could not
      // reach each other (no rank failed by itself). Not the job's failure: it starts again
      // from its checkpoint, up to controller.peer_retries times. On one node a lost peer
      // is the job's own doing.
      if (b->placed->nodes.size() > 1) {
        peers_lost(r, *b, *failed);
        continue;
      }
    }
    if (finished) {
      std::string reason = "finished on " + finished->node + " (sia-run round " +
                           std::to_string(finished->generation) + ")";
      end_job(r, b->spec.name, Lifecycle::finished, reason, 0);
    } else if (failed && failed->cancelled) {
      end_job(r, b->spec.name, Lifecycle::cancelled, failed->reason, std::nullopt);
    } else if (failed) {
      std::string reason = "failed on " + failed->node + ": " + failed->reason;
      end_job(r, b->spec.name, Lifecycle::failed, reason, failed->exit_status, failed->log_tail);
    }
  }
  flush(r);
  // A queued job the configured cluster (down nodes included) can no longer hold -- it
  // changed since the job was submitted -- fails now rather than queueing forever.
  for (const BookJob* b : r.book.active()) {
    if (b->placed) continue;
    std::string why = unschedulable_reason(b->spec, r.catalog, cluster_, /*strict=*/false);
    if (why.empty()) continue;
    std::string reason = "cannot run on cluster " + cluster_.name + ": " + why;
    warn("job " + b->spec.name + ": " + reason);
    end_job(r, b->spec.name, Lifecycle::failed, reason, std::nullopt);
  }
  flush(r);
}

// 3b. App schedulers: close the phases every live trial has reached (several in a row when
// the survivors are past the next budget too), stopping the worse trials; a hyperband app's
// brackets each on their own trials.
void RoundEngine::schedule_apps(Pass& r) {
  json stopped = json::array();
  for (const auto& [name, app] : r.book.apps()) {
    for (int k = 0; k < static_cast<int>(app.phases.size()); ++k) {  // hyperband: each bracket
      SuccessiveHalving sh = bracket_halving(app.spec, k, app.phase(k));
      while (sh.halving()) {
        std::vector<TrialProgress> live;
        for (std::size_t i = 0; i < app.trials.size(); ++i) {
          const BookJob* b = r.book.find(app.trials[i]);
          if (app.bracket[i] == k && b && !is_ended(b->state)) {
            live.push_back({app.trials[i], b->fraction, trial_metric(*b, app.spec.metric)});
          }
        }
        const PhaseStep step = step_phase(sh, live);
        if (!step.closed) break;  // its trials at the budget wait (JobBook::at_rung)
        for (const auto& s : step.stops) {
          end_job(r, s.name, Lifecycle::stopped, s.reason, std::nullopt);
          stopped.push_back(s.name);
        }
        r.records.push_back(make_app_phase(name, sh.phase(), r.now, k));
        flush(r);  // the next phase ranks on the book as it is now
      }
    }
  }
  r.result["stopped"] = stopped;
}

// Jobs whose workers stopped reporting: left out for this round (their nodes stop them)
// so that the next one restarts them from their checkpoints; failed after the retries.
void RoundEngine::leave_out_hung(Pass& r) {
  json silent = json::array();
  const auto& cc = config_.controller;
  for (const BookJob* b : r.book.active()) {
    // A job its node never started because every delivery since it was placed failed
    // counts as silent too: not "running" forever.
    const std::optional<double> undelivered = undelivered_for(r.book, *b, r.now);
    const double quiet = undelivered ? *undelivered : silent_for(*b, r.now);
    if (cc.hung_timeout <= 0 || quiet <= cc.hung_timeout || !r.up_set.count(b->report_node)) {
      continue;
    }
    // A node whose last delivery failed may run the job without having said so.
    if (auto n = r.book.nodes().find(b->report_node);
        !undelivered && n != r.book.nodes().end() && !n->second.delivery_error.empty()) {
      continue;
    }
    const std::string secs = std::to_string(static_cast<long long>(quiet)) + " s";
    const std::string what =
        undelivered ? "node " + b->report_node + " has refused its delivery for " + secs
                    : "its workers sent no report for " + secs;
    if (b->done_reported) {  // it reached its end but does not exit: it is done
      std::string reason =
          "its workers reported done but had not exited after " + secs + "; stopped";
      end_job(r, b->spec.name, Lifecycle::finished, reason, 0);
    } else if (b->silent_restarts >= cc.hung_retries) {
      std::string reason =
          what + " (restarted " + std::to_string(b->silent_restarts) + " time(s) for it already)";
      end_job(r, b->spec.name, Lifecycle::failed, reason, std::nullopt);
    } else {
      r.records.push_back(make_job_silent(b->spec.name, quiet, r.now));
      silent.push_back(b->spec.name);
    }
    warn("job " + b->spec.name + ": " + what);
    r.hung.insert(b->spec.name);
  }
  flush(r);
  r.result["silent"] = silent;
}

// Who the round is about: hung jobs left out first; held, requeued and hung jobs and trials
// at their rung wait, but their fairness units count.
Census RoundEngine::census(Pass& r) {
  leave_out_hung(r);
  r.active = r.book.active();
  std::vector<CensusEntry> entries;
  std::map<std::string, int> units;                   // "app:NAME" or "job:NAME" -> its number
  std::vector<std::pair<std::string, bool>> unit_of;  // per number: name, is an app
  for (const BookJob* b : r.active) {
    const bool app = !b->spec.app.empty();
    const std::string unit = app ? b->spec.app : b->spec.name;
    auto [it, added] =
        units.emplace((app ? "app:" : "job:") + unit, static_cast<int>(units.size()));
    if (added) unit_of.emplace_back(unit, app);
    const bool waiting = r.hung.count(b->spec.name) || !b->held_by.empty() ||
                         !b->requeue_by.empty() || r.book.at_rung(*b);
    entries.push_back({false, false, true, waiting, it->second});
  }
  r.census = take_census(entries, static_cast<int>(units.size()));
  for (std::size_t u = 0; u < unit_of.size(); ++u) {
    if (!r.census.unit_active[u]) continue;
    (unit_of[u].second ? r.counted_apps : r.counted_jobs).insert(unit_of[u].first);
  }
  return r.census;
}

// The stages' input: the jobs to schedule (not hung, held or requeued; a job that reported
// done keeps its GPUs until it exits) and the previous decision, on the nodes that are up.
StageInput RoundEngine::stage_input(Pass& r, const Cluster& cluster) {
  StageInput in;
  in.round = r.number;
  in.now = r.now;
  in.cluster = cluster;
  json finishing = json::array();
  json left_out = json::array();  // held, or requeued: their nodes stop them
  json at_rung = json::array();   // trials waiting for their phase to close: the same
  for (const BookJob* b : r.active) {
    if (r.hung.count(b->spec.name)) continue;
    if (!b->held_by.empty() || !b->requeue_by.empty()) {
      left_out.push_back(b->spec.name);
      continue;
    }
    if (r.book.at_rung(*b)) {
      at_rung.push_back(b->spec.name);
      continue;
    }
    if (!b->spec.app.empty()) {
      if (const BookApp* a = r.book.find_app(b->spec.app)) {
        in.apps[b->spec.name] = r.book.app_ref(*a, b->spec.name);
      }
    }
    JobState s = r.book.job_state(*b, r.now);
    if (b->done_reported && b->placed) {
      bool resumed = false;  // it said "done" but did not finish: schedule it again
      if (auto it = r.on_nodes.find(b->spec.name); it != r.on_nodes.end()) {
        for (const auto& x : it->second) {
          resumed = resumed ||
                    (x.node == b->report_node && x.generation == b->generation &&
                     (x.state == exec::RunState::preempted || x.state == exec::RunState::killed));
        }
      }
      if (!resumed) {  // it keeps its GPUs (pinned) until it has exited by itself
        finishing.push_back(b->spec.name);
        s.restoring = true;
      }
    }
    in.jobs.push_back(std::move(s));
    r.scheduled.insert(b->spec.name);
  }
  r.result["finishing"] = finishing;
  r.result["left_out"] = left_out;
  r.result["at_rung"] = at_rung;
  if (cluster.nodes.empty() || in.jobs.empty()) return in;
  if (r.book.last_allocation().is_object()) {
    try {
      in.previous_allocation = previous_for(
          parse_allocation(Node(r.book.last_allocation(), "previous allocation", "")), r.scheduled);
    } catch (const Error& e) {
      warn("the previous round's allocation does not read (" + std::string(e.what()) +
           "); solving without it");
    }
  }
  if (r.book.last_placement().is_object()) {
    // Only jobs still scheduled, on nodes that are up.
    json p = placement_jobs_only(r.book.last_placement(), r.scheduled);
    json kept = json::array();
    for (const auto& j : p["jobs"]) {
      bool ok = j.contains("gpu_type") && j["gpu_type"].is_string() &&
                cluster.type_index(j["gpu_type"].get<std::string>()) >= 0;
      for (const auto& n : j.value("nodes", json::array())) {
        ok = ok && n.is_object() && n.contains("name") && n["name"].is_string() &&
             r.up_set.count(n["name"].get<std::string>()) &&
             !r.reserved.count(n["name"].get<std::string>());
      }
      if (ok) kept.push_back(j);
    }
    p["jobs"] = kept;
    p["cluster_name"] = cluster.name;
    p["evicted"] = json::array();
    p["waiting"] = json::array();
    in.previous_placement = p;
  }
  return in;
}

// 4. Schedule on the nodes that are up and not reserved: estimate -> solve -> place; save
// the documents.
void RoundEngine::schedule(Pass& r) {
  std::vector<std::string> lent = r.up;
  if (!config_.controller.reservations.empty()) {
    std::set<std::string> active;
    for (const BookJob* b : r.active) active.insert(b->spec.name);
    const ReservedChoice choice = reserve_from_book(
        r.reservations, cluster_, r.now, r.book.last_cluster(), r.book.last_placement(), active);
    r.reserved = choice.nodes;
    std::erase_if(lent, [&](const std::string& n) { return r.reserved.count(n) > 0; });
    json taken = json::array();
    for (const auto& tb : choice.taken_back) {
      taken.push_back({{"node", tb.node}, {"jobs", tb.jobs}, {"gpus", tb.gpus}});
      warn("node " + tb.node + ": taken back for a reservation; checkpoint-stopping " +
           std::to_string(tb.jobs.size()) + " job(s) on it");
    }
    r.result["reserved"] = json(std::vector<std::string>(r.reserved.begin(), r.reserved.end()));
    r.result["taken_back"] = taken;
  }
  r.up_cluster = cluster_without_down(cluster_, lent);
  const Cluster& cluster = r.up_cluster;
  StageInput in = stage_input(r, cluster);
  StageOutput& out = r.out;
  out.placement.cluster_name = cluster.name;
  out.allocation_data = nullptr;
  out.placement_data = {{"cluster_name", cluster.name},
                        {"jobs", json::array()},
                        {"evicted", json::array()},
                        {"waiting", json::array()}};
  if (!cluster.nodes.empty() && !in.jobs.empty()) {
    Stages stages(config_, store_.root());
    if (options_.run_stages) {
      options_.run_stages([&] { out = stages.run(in); });
      for (auto it = r.scheduled.begin(); it != r.scheduled.end();) {  // cancelled meanwhile
        const BookJob* b = r.book.find(*it);
        it = (!b || is_ended(b->state)) ? r.scheduled.erase(it) : std::next(it);
      }
    } else {
      out = stages.run(in);
    }
    for (const auto& [job, why] : out.unschedulable) {
      std::string reason = "cannot be scheduled: " + why;
      warn("job " + job + ": " + reason);
      end_job(r, job, Lifecycle::failed, reason, std::nullopt);
      r.scheduled.erase(job);
    }
    flush(r);
  }
  // Never hand out a job that is not active and scheduled (an external stage may add any).
  r.placement_data = placement_jobs_only(out.placement_data, r.scheduled);
  for (const auto& j : out.placement_data.value("jobs", json::array())) {
    std::string name = j.value("name", "");
    if (!r.scheduled.count(name)) {
      warn("stage place: job \"" + name + "\" is not scheduled; dropped");
    }
  }
  if (!options_.dry_run && out.profiles)
    os::write_file_atomic(store_.path(kProfilesFile), *out.profiles);
  if (!options_.dry_run && config_.controller.retention > 0 && !out.documents.empty()) {
    store_.save_round(r.number, out.documents);
    store_.prune_rounds(r.number, config_.controller.retention);
  }
}

// The round record's fairness: each scheduled job's and app's finish-time fairness,
// estimated from the round's goodput matrix with the GPUs it was placed on, N_avg from the
// book with this round counted (null when the round scheduled nothing).
json RoundEngine::round_fairness(const Pass& r) const {
  const GoodputMatrix& m = r.out.matrix;
  if (m.jobs.empty()) return nullptr;
  const int units = r.census.active_units;
  std::map<std::string, Config> given;
  for (const JobPlacement& p : r.out.placement.jobs) {
    if (r.scheduled.count(p.job) && !p.nodes.empty()) {
      given[p.job] = Config{p.type, static_cast<int>(p.nodes.size()), p.gpu_count()};
    }
  }
  std::map<std::string, double> job_n_avg, app_n_avg, measured;
  std::set<std::string> jobs = r.counted_jobs, apps = r.counted_apps;  // waiting ones: counted
  for (const GoodputRow& row : m.jobs) {
    const BookJob* b = r.book.find(row.job);
    if (!b || is_ended(b->state)) continue;
    jobs.insert(row.job);
    job_n_avg[row.job] = b->fair.n_avg_with(units);
    if (auto rate = measured_rate(*b)) measured[row.job] = *rate;
    if (!row.app) continue;
    if (const BookApp* a = r.book.find_app(row.app->name)) {
      apps.insert(a->spec.name);
      app_n_avg[a->spec.name] = a->fair.n_avg_with(units);
    }
  }
  const FairnessEstimate est =
      estimate_fairness(m, given, job_n_avg, app_n_avg, config_.controller.round, measured);
  return make_round_fairness(units, jobs, apps, est);
}

// 5. Journal the decision (with the fairness booked from it), deliver every node its part,
// and journal each node's answer.
void RoundEngine::deliver(Pass& r) {
  json models = json::object();
  for (const auto& [job, m] : r.out.models) {
    if (r.scheduled.count(job)) models[job] = m;
  }
  const Cluster& up = r.up_cluster;
  json deadlines = nullptr;  // the guaranteed jobs' re-check (stages.hpp)
  for (const auto& g : r.out.guarantees) {
    if (!r.scheduled.count(g.name)) continue;
    const double finish = g.plan.admitted ? g.plan.finish : g.plan.best_finish;
    if (deadlines.is_null()) deadlines = json::object();
    deadlines[g.name] = {{"finish", finish == deadline::kNever ? json(nullptr) : json(finish)},
                         {"at_risk", !g.plan.admitted}};
  }
  // A new attempt starts a new generation on the same placement: a restart, as a move is
  // (the drivers stop it everywhere before it starts anywhere, ctl/stop_first.hpp).
  if (r.placement_data.contains("jobs") && r.placement_data["jobs"].is_array()) {
    for (auto& j : r.placement_data["jobs"]) {
      if (j.is_object() && r.new_attempts.count(j.value("name", ""))) j["restart"] = true;
    }
  }
  r.records.push_back(make_round(r.number, r.now, cluster_to_json(up.nodes.empty() ? cluster_ : up),
                                 r.out.allocation_data, r.placement_data, models, r.fairness,
                                 deadlines, r.reserved));
  flush(r);
  if (options_.dry_run || r.up.empty()) return;
  Placement full = parse_placement(Node(r.placement_data, "round placement", ""), cluster_);
  json specs = json::array();
  for (const BookJob* b : r.book.active()) {
    if (r.scheduled.count(b->spec.name))
      specs.push_back(node_job_json(r.book, *b, config_.controller.checkpoint_root));
  }
  json jobs_doc = {{"apiVersion", kApiVersion},
                   {"kind", "Jobs"},
                   {"metadata", {{"generator", "sia-ctl round"}, {"round", r.number}}},
                   {"data", {{"jobs", specs}}}};
  for (const auto& n : driver_.deliver(r.number, full, jobs_doc)) {
    json record = make_delivered(r.number, n.node, n.acknowledged, n.error, n.plan);
    for (const auto& a : record["actions"]) {
      const std::string job = a["job"].get<std::string>();
      r.actions_of[job].push_back(n.node + ": " + a["action"].get<std::string>());
      if (a.contains("warning")) {
        warn("node " + n.node + ": job " + job + ": " + a["warning"].get<std::string>());
      }
    }
    if (!n.acknowledged && r.up_set.count(n.node)) {
      warn("node " + n.node + ": delivery failed: " + n.error);
    }
    r.records.push_back(std::move(record));
    r.delivered.push_back({{"node", n.node}, {"ok", n.acknowledged}, {"error", n.error}});
  }
  flush(r);
}

// The round's result: its nodes, and the active jobs with what their nodes did.
void RoundEngine::summarize(Pass& r) {
  r.result["ended"] = r.ended;
  json nodes = json::array();
  for (const auto& s : r.statuses) {
    json n = {{"name", s.node}, {"up", s.ok}, {"error", s.error}};
    for (const auto& d : r.delivered) {
      if (d["node"] == s.node) {
        n["delivered"] = d["ok"];
        n["delivery_error"] = d["error"];
      }
    }
    nodes.push_back(n);
  }
  r.result["nodes"] = nodes;
  json jobs = json::array();
  for (const BookJob* b : r.book.active()) {
    json actions = json::array();
    for (const auto& a : r.actions_of[b->spec.name]) actions.push_back(a);
    jobs.push_back({{"name", b->spec.name},
                    {"state", to_string(b->state)},
                    {"placement", describe_placed(b->placed)},
                    {"gpus", b->placed ? b->placed->gpus() : 0},
                    {"restarts", std::max(0, b->starts - 1)},
                    {"progress", b->progress},
                    {"actions", actions}});
  }
  r.result["jobs"] = jobs;
}

}  // namespace sia::ctl
