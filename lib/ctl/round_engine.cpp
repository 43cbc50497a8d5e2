#include "ctl/round_engine.hpp"

#include "ctl/report_records.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <set>

#include "core/document.hpp"
#include "core/error.hpp"
#include "ctl/job_requests.hpp"
#include "ctl/stages.hpp"
#include "ctl/submission.hpp"
#include "model/catalog.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

struct JobOnNode {
  std::string node;
  std::string state;
  std::int64_t generation = 0;
  std::optional<int> exit_status;
  std::string reason;
  std::optional<LogTail> log_tail;  // a failed job: its failing rank and that rank's log tail
};

// Every job any node reports, by name.
std::map<std::string, std::vector<JobOnNode>> jobs_on_nodes(const std::vector<NodeStatus>& st) {
  std::map<std::string, std::vector<JobOnNode>> out;
  for (const auto& s : st) {
    if (!s.ok || !s.status.is_object() || !s.status.contains("jobs") ||
        !s.status["jobs"].is_array()) {
      continue;
    }
    for (const auto& j : s.status["jobs"]) {
      if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
      JobOnNode x;
      x.node = s.node;
      x.state = j.value("state", "");
      if (j.contains("round") && j["round"].is_number_integer()) x.generation = j["round"];
      if (j.contains("exit_status") && j["exit_status"].is_number_integer()) {
        x.exit_status = j["exit_status"].get<int>();
      }
      if (j.contains("reason") && j["reason"].is_string()) x.reason = j["reason"];
      if (j.contains("failed_rank")) {
        x.log_tail = log_tail_from_json(
            {{"node", s.node}, {"rank", j["failed_rank"]}, {"text", j.value("log_tail", json())}});
      }
      out[j["name"].get<std::string>()].push_back(std::move(x));
    }
  }
  return out;
}

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

RoundEngine::RoundEngine(const Config& config, Cluster cluster, const StateStore& store,
                         NodeDriver& driver, RoundOptions options)
    : config_(config),
      cluster_(std::move(cluster)),
      store_(store),
      driver_(driver),
      options_(std::move(options)) {
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

json RoundEngine::run(JobBook& book) {
  const double now = options_.now();
  const std::int64_t round = book.round() + 1;
  Catalog catalog(config_.controller.catalog.empty() ? default_catalog_dir()
                                                     : config_.controller.catalog);
  json result = {{"round", round}, {"cluster", cluster_.name}, {"dry_run", options_.dry_run}};
  json submitted = json::array(), rejected = json::array();
  // Per request, by its past tense ("cancelled", "held", ...): the jobs named.
  json requested = json::object();
  for (auto r : {JobRequest::cancel, JobRequest::hold, JobRequest::release, JobRequest::requeue}) {
    requested[past_tense(r)] = json::array();
  }

  // 1. The inbox.
  std::vector<std::string> files = store_.inbox_files();
  book.forget_inbox_except({files.begin(), files.end()});
  std::vector<json> records;
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
          req.contains("time") && req["time"].is_number() ? req["time"].get<double>() : now;
      const std::string where = store_.path("inbox/" + f);
      if (req["type"] == "submit") {
        Node jobs = Node(req, where, "").at("jobs");
        std::vector<JobSpec> specs;
        for (std::size_t i = 0; i < jobs.size(); ++i) {
          JobSpec s = parse_job_spec(jobs[i]);
          names.push_back(s.name);
          validate_submission(s, catalog, where + ": jobs[" + std::to_string(i) + "]");
          check_admissible(s, catalog, cluster_, where + ": jobs[" + std::to_string(i) + "]");
          check_name_unused(book, s.name);
          if (pending.count(s.name)) {
            throw Error(ExitStatus::data,
                        "job \"" + s.name + "\" is submitted twice (a job name is never reused)");
          }
          specs.push_back(std::move(s));
        }
        for (const auto& s : specs) {
          pending.insert(s.name);
          submitted.push_back(s.name);
        }
        records.push_back(make_submit(f, identity, time, specs));
      } else {
        Node jobs = Node(req, where, "").at("jobs");
        names = jobs.as_strings();
        const JobRequest type = parse_job_request(req["type"].get<std::string>()).value();
        for (const auto& n : names) requested[past_tense(type)].push_back(n);
        records.push_back(make_job_request(type, f, identity, time, names));
      }
      done_files.push_back(f);
    } catch (const Error& e) {
      warn("inbox/" + f + ": refused: " + e.what());
      records.push_back(make_rejected(f, identity, now, names, e.what()));
      rejected.push_back({{"file", f}, {"jobs", names}, {"reason", e.what()}});
      rejected_files.push_back(f);
    }
  }
  commit(book, std::move(records));
  records.clear();
  if (!options_.dry_run) {
    for (const auto& f : done_files) store_.remove_inbox(f);
    for (const auto& f : rejected_files) store_.reject_inbox(f);
  }
  result["submitted"] = submitted;
  result.update(requested);  // "cancelled", "held", "released", "requeued"
  result["rejected"] = rejected;

  // 2. Nodes and their reports.
  std::vector<NodeStatus> statuses = driver_.observe();
  for (const auto& s : statuses) {
    // Said once when a node goes down (or is first found down), not every round.
    auto was = book.nodes().find(s.node);
    bool was_down = was != book.nodes().end() && was->second.last_check > 0 && !was->second.up;
    records.push_back(make_node_seen(s.node, s.ok, s.error, now));
    if (!s.ok && !was_down) warn("node " + s.node + " is down: " + s.error);
  }
  std::vector<json> reports =
      report_records(book, driver_.drain_reports(), now, [this](const std::string& w) { warn(w); });
  const int report_count = static_cast<int>(reports.size());
  for (auto& r : reports) records.push_back(std::move(r));
  commit(book, std::move(records));
  records.clear();
  result["reports"] = report_count;

  // 3. Jobs that ended on their nodes.
  auto on_nodes = jobs_on_nodes(statuses);
  json ended = json::array();
  // Ends `job` (a journal record, and a line of the round's result).
  auto end_job = [&](const std::string& job, Lifecycle state, const std::string& reason,
                     std::optional<int> exit_status,
                     const std::optional<LogTail>& log_tail = std::nullopt) {
    records.push_back(make_job_ended(job, state, reason, exit_status, now, log_tail));
    ended.push_back({{"job", job}, {"state", to_string(state)}, {"reason", reason}});
  };
  for (const BookJob* b : book.active()) {
    auto it = on_nodes.find(b->spec.name);
    if (it == on_nodes.end()) continue;
    const JobOnNode* finished = nullptr;
    const JobOnNode* failed = nullptr;
    for (const auto& x : it->second) {
      if (x.state == "finished" && !finished) finished = &x;
      if (x.state == "failed" && !failed) failed = &x;
    }
    if (finished) {
      std::string reason = "finished on " + finished->node + " (sia-run round " +
                           std::to_string(finished->generation) + ")";
      end_job(b->spec.name, Lifecycle::finished, reason, 0);
    } else if (failed) {
      std::string reason = "failed on " + failed->node + ": " + failed->reason;
      end_job(b->spec.name, Lifecycle::failed, reason, failed->exit_status, failed->log_tail);
    }
  }
  commit(book, std::move(records));
  records.clear();

  // A queued job the configured cluster (down nodes included) can no longer hold -- it
  // changed since the job was submitted -- fails now rather than queueing forever.
  for (const BookJob* b : book.active()) {
    if (b->placed) continue;
    std::string why = unschedulable_reason(b->spec, catalog, cluster_, /*strict=*/false);
    if (why.empty()) continue;
    std::string reason = "cannot run on cluster " + cluster_.name + ": " + why;
    warn("job " + b->spec.name + ": " + reason);
    end_job(b->spec.name, Lifecycle::failed, reason, std::nullopt);
  }
  commit(book, std::move(records));
  records.clear();

  // 4. Schedule.
  std::vector<std::string> up = driver_.nodes_up();
  std::set<std::string> up_set(up.begin(), up.end());
  Cluster cluster = cluster_without_down(cluster_, up);
  StageInput in;
  in.round = round;
  in.cluster = cluster;
  std::set<std::string> scheduled;
  json finishing = json::array();
  json silent = json::array();
  // Jobs whose workers stopped reporting: left out for this round (their nodes stop them)
  // so that the next one restarts them from their checkpoints; failed after the retries.
  std::set<std::string> hung;
  const auto& cc = config_.controller;
  for (const BookJob* b : book.active()) {
    const double quiet = silent_for(*b, now);
    if (cc.hung_timeout <= 0 || quiet <= cc.hung_timeout || !up_set.count(b->report_node)) {
      continue;
    }
    // A node whose last delivery failed may run the job without having said so.
    if (auto n = book.nodes().find(b->report_node);
        n != book.nodes().end() && !n->second.delivery_error.empty()) {
      continue;
    }
    const std::string secs = std::to_string(static_cast<long long>(quiet)) + " s";
    const std::string what = "its workers sent no report for " + secs;
    if (b->done_reported) {  // it reached its end but does not exit: it is done
      std::string reason =
          "its workers reported done but had not exited after " + secs + "; stopped";
      end_job(b->spec.name, Lifecycle::finished, reason, 0);
    } else if (b->silent_restarts >= cc.hung_retries) {
      std::string reason =
          what + " (restarted " + std::to_string(b->silent_restarts) + " time(s) for it already)";
      end_job(b->spec.name, Lifecycle::failed, reason, std::nullopt);
    } else {
      records.push_back(make_job_silent(b->spec.name, quiet, now));
      silent.push_back(b->spec.name);
    }
    warn("job " + b->spec.name + ": " + what);
    hung.insert(b->spec.name);
  }
  commit(book, std::move(records));
  records.clear();
  result["silent"] = silent;
  json left_out = json::array();  // held, or requeued: their nodes stop them
  for (const BookJob* b : book.active()) {
    if (hung.count(b->spec.name)) continue;
    if (!b->held_by.empty() || !b->requeue_by.empty()) {
      left_out.push_back(b->spec.name);
      continue;
    }
    if (b->done_reported && b->placed) {
      bool resumed = false;  // it said "done" but did not finish: schedule it again
      if (auto it = on_nodes.find(b->spec.name); it != on_nodes.end()) {
        for (const auto& x : it->second) {
          resumed = resumed || (x.node == b->report_node && x.generation == b->generation &&
                                (x.state == "preempted" || x.state == "killed"));
        }
      }
      if (!resumed) {  // it keeps its GPUs (pinned) until it has exited by itself
        finishing.push_back(b->spec.name);
        JobState s = book.job_state(*b, now);
        s.restoring = true;
        in.jobs.push_back(std::move(s));
        scheduled.insert(b->spec.name);
        continue;
      }
    }
    in.jobs.push_back(book.job_state(*b, now));
    scheduled.insert(b->spec.name);
  }
  result["finishing"] = finishing;
  result["left_out"] = left_out;
  StageOutput out;
  out.placement.cluster_name = cluster.name;
  out.allocation_data = nullptr;
  out.placement_data = {{"cluster_name", cluster.name},
                        {"jobs", json::array()},
                        {"evicted", json::array()},
                        {"waiting", json::array()}};
  if (!cluster.nodes.empty() && !in.jobs.empty()) {
    if (book.last_allocation().is_object()) {
      try {
        Allocation prev = parse_allocation(Node(book.last_allocation(), "previous allocation", ""));
        std::vector<JobAllocation> kept;
        for (const auto& ja : prev.jobs) {
          if (scheduled.count(ja.job)) kept.push_back(ja);
        }
        prev.jobs = std::move(kept);
        in.previous_allocation = std::move(prev);
      } catch (const Error& e) {
        warn("the previous round's allocation does not read (" + std::string(e.what()) +
             "); solving without it");
      }
    }
    if (book.last_placement().is_object()) {
      // Only jobs still scheduled, on nodes that are up.
      json p = placement_jobs_only(book.last_placement(), scheduled);
      json kept = json::array();
      for (const auto& j : p["jobs"]) {
        bool ok = j.contains("gpu_type") && j["gpu_type"].is_string() &&
                  cluster.type_index(j["gpu_type"].get<std::string>()) >= 0;
        for (const auto& n : j.value("nodes", json::array())) {
          ok = ok && n.is_object() && n.contains("name") && n["name"].is_string() &&
               up_set.count(n["name"].get<std::string>());
        }
        if (ok) kept.push_back(j);
      }
      p["jobs"] = kept;
      p["cluster_name"] = cluster.name;
      p["evicted"] = json::array();
      p["waiting"] = json::array();
      in.previous_placement = p;
    }
    Stages stages(config_, store_.root());
    if (options_.run_stages) {
      options_.run_stages([&] { out = stages.run(in); });
      for (auto it = scheduled.begin(); it != scheduled.end();) {  // cancelled meanwhile
        const BookJob* b = book.find(*it);
        it = (!b || is_ended(b->state)) ? scheduled.erase(it) : std::next(it);
      }
    } else {
      out = stages.run(in);
    }
    for (const auto& [job, why] : out.unschedulable) {
      std::string reason = "cannot be scheduled: " + why;
      warn("job " + job + ": " + reason);
      end_job(job, Lifecycle::failed, reason, std::nullopt);
      scheduled.erase(job);
    }
    commit(book, std::move(records));
    records.clear();
  }
  result["ended"] = ended;
  // Never hand out a job that is not active and scheduled (an external stage may add any).
  json placement_data = placement_jobs_only(out.placement_data, scheduled);
  for (const auto& j : out.placement_data.value("jobs", json::array())) {
    std::string name = j.value("name", "");
    if (!scheduled.count(name)) warn("stage place: job \"" + name + "\" is not scheduled; dropped");
  }
  if (!options_.dry_run && config_.controller.retention > 0 && !out.documents.empty()) {
    store_.save_round(round, out.documents);
    store_.prune_rounds(round, config_.controller.retention);
  }
  json models = json::object();
  for (const auto& [job, m] : out.models) {
    if (scheduled.count(job)) models[job] = m;
  }
  records.push_back({{"type", "round"},
                     {"round", round},
                     {"time", now},
                     {"cluster", cluster_to_json(cluster.nodes.empty() ? cluster_ : cluster)},
                     {"allocation", out.allocation_data},
                     {"placement", placement_data},
                     {"models", models}});
  commit(book, std::move(records));
  records.clear();

  // 5. Deliver.
  json delivered = json::array();
  std::map<std::string, std::vector<std::string>> actions_of;  // job -> "node: action"
  if (!options_.dry_run && !up.empty()) {
    Placement full = parse_placement(Node(placement_data, "round placement", ""), cluster_);
    json specs = json::array();
    for (const BookJob* b : book.active()) {
      if (scheduled.count(b->spec.name))
        specs.push_back(node_job_json(*b, config_.controller.checkpoint_root));
    }
    json jobs_doc = {{"apiVersion", kApiVersion},
                     {"kind", "Jobs"},
                     {"metadata", {{"generator", "sia-ctl round"}, {"round", round}}},
                     {"data", {{"jobs", specs}}}};
    for (const auto& r : driver_.deliver(round, full, jobs_doc)) {
      json record = make_delivered(round, r.node, r.acknowledged, r.error, r.plan);
      for (const auto& a : record["actions"]) {
        const std::string job = a["job"].get<std::string>();
        actions_of[job].push_back(r.node + ": " + a["action"].get<std::string>());
        if (a.contains("warning")) {
          warn("node " + r.node + ": job " + job + ": " + a["warning"].get<std::string>());
        }
      }
      if (!r.acknowledged && up_set.count(r.node)) {
        warn("node " + r.node + ": delivery failed: " + r.error);
      }
      records.push_back(std::move(record));
      delivered.push_back({{"node", r.node}, {"ok", r.acknowledged}, {"error", r.error}});
    }
    commit(book, std::move(records));
    records.clear();
  }

  // The result.
  json nodes = json::array();
  for (const auto& s : statuses) {
    json n = {{"name", s.node}, {"up", s.ok}, {"error", s.error}};
    for (const auto& d : delivered) {
      if (d["node"] == s.node) {
        n["delivered"] = d["ok"];
        n["delivery_error"] = d["error"];
      }
    }
    nodes.push_back(n);
  }
  result["nodes"] = nodes;
  json jobs = json::array();
  for (const BookJob* b : book.active()) {
    json actions = json::array();
    for (const auto& a : actions_of[b->spec.name]) actions.push_back(a);
    jobs.push_back({{"name", b->spec.name},
                    {"state", to_string(b->state)},
                    {"placement", describe_placed(b->placed)},
                    {"gpus", b->placed ? b->placed->gpus() : 0},
                    {"restarts", std::max(0, b->starts - 1)},
                    {"progress", b->progress},
                    {"actions", actions}});
  }
  result["jobs"] = jobs;

  // 6. Snapshot, without the jobs that ended longer ago than the history keeps them.
  if (config_.controller.history_days > 0) {
    book.forget_ended_before(now - config_.controller.history_days * 86400);
  }
  if (!options_.dry_run) store_.compact(book);
  return result;
}

}  // namespace sia::ctl
