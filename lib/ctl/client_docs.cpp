#include "ctl/client_docs.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>

#include "cli/table.hpp"
#include "core/cluster.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/time_text.hpp"
#include "ctl/app_explanation.hpp"
#include "exec/job_launch.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

const json* find_named(const json& doc, const char* list, const std::string& name) {
  if (!doc.is_object() || !doc.contains(list) || !doc[list].is_array()) return nullptr;
  for (const auto& j : doc[list]) {
    if (j.is_object() && j.value("name", "") == name) return &j;
  }
  return nullptr;
}

std::string num(double v, int digits) {
  return cli::fixed(v, digits);
}

std::string config_text(const json& c) {
  if (!c.is_object()) return "-";
  return "(" + std::to_string(c.value("nodes", 0)) + ", " + std::to_string(c.value("gpus", 0)) +
         ", " + c.value("gpu_type", std::string("?")) + ")";
}

// "silent: no report for 3m20s" when a running job's workers have been quiet too long.
std::string silence(const BookJob& b, double now, double silent_after) {
  const double quiet = silent_for(b, now);
  if (quiet <= silent_after) return "";
  return "silent: no report from its workers for " + cli::duration(quiet) +
         (b.silent_restarts > 0
              ? " (restarted " + std::to_string(b.silent_restarts) + " time(s) for it)"
              : "");
}

// "peer-lost restarts: 3 (1 of 2 retries used since its last progress ...)" for a job
// restarted because its ranks lost their peers (FAILURE MODEL), "" for one never so
// restarted: in all, and those that count against controller.peer_retries.
std::string peer_restarts_text(const BookJob& b, int peer_retries) {
  if (b.peer_restarts <= 0) return "";
  return "peer-lost restarts: " + std::to_string(b.peer_restarts) + " (" +
         std::to_string(b.peer_retries_used) + " of " + std::to_string(peer_retries) +
         " retries used since its last progress past where its peers were lost, "
         "controller.peer_retries)";
}

// The placer's note on why `job` waits, from the last round's placement ("" none).
std::string waiting_note(const JobBook& book, const std::string& job) {
  const json& p = book.last_placement();
  if (!p.is_object() || !p.contains("waiting_reasons")) return "";
  const json& wr = p["waiting_reasons"];
  return wr.is_object() && wr.contains(job) && wr[job].is_string() ? wr[job].get<std::string>()
                                                                   : "";
}

std::string need_text(int n) {
  return std::to_string(n) + " GPU" + (n == 1 ? "" : "s");
}

// A guaranteed job's standing in the last round's re-check: "at risk: ..." or "on
// schedule: ..."; "" before a round re-checked it.
std::string deadline_standing(const BookJob& b) {
  if (b.spec.job_class != JobClass::guaranteed || !b.spec.deadline) return "";
  const std::string deadline = "deadline " + utc_text(*b.spec.deadline);
  if (b.at_risk) {
    return "at risk: " + deadline + ", projected finish " +
           (b.projected_finish ? utc_text(*b.projected_finish) + " at best" : "unknown");
  }
  if (!b.projected_finish) return "";
  return "on schedule: " + deadline + ", projected finish by " + utc_text(*b.projected_finish);
}

// Why a job that has not ended is where it is: one of the documented reason codes (see
// client_docs.hpp) and a line for people; {"", ""} for a job that runs as it should.
std::pair<std::string, std::string> why_of(const JobBook& book, const BookJob& b, double now,
                                           double silent_after) {
  if (!b.held_by.empty()) {
    return {"held", "held by " + identity_name(b.held_by) +
                        (b.placed ? ": the next round stops it with a checkpoint"
                                  : " " + cli::duration(std::max(0.0, now - b.held_time)) +
                                        " ago; sia-ctl release " + b.spec.name + " lets it run")};
  }
  if (!b.requeue_by.empty()) {
    return {"requeue", "requeue requested by " + identity_name(b.requeue_by) +
                           ": the next round stops it with a checkpoint; it waits from then on"};
  }
  if (book.at_rung(b)) {
    const BookApp* a = book.find_app(b.spec.app);
    const int k = a->bracket_of(b.spec.name);
    const int brackets = static_cast<int>(a->phases.size());
    return {"rung", "reached the budget of phase " + std::to_string(a->phase(k) + 1) + " of " +
                        std::to_string(bracket_scheduler(a->spec.scheduler, k).rungs) +
                        (brackets > 1 ? " of bracket " + std::to_string(k + 1) + " of " +
                                            std::to_string(brackets)
                                      : "") +
                        " of app " + a->spec.name +
                        (b.placed ? "; the next round stops it with a checkpoint" : "") +
                        "; it waits for the app's other trials"};
  }
  if (b.placed) {
    // Placed but not (re)started on its node: the node's last delivery failed, and keeps
    // failing until it is fixed or its node is fenced -- not "running".
    if (auto waited = undelivered_for(book, b, now)) {
      return {"undelivered",
              "not started: node " + b.report_node + " refused it " + cli::duration(*waited) +
                  " ago and since: " + book.nodes().at(b.report_node).delivery_error};
    }
    if (b.done_reported) return {"finishing", "its workers reported done; ending"};
    if (auto quiet = silence(b, now, silent_after); !quiet.empty()) return {"silent", quiet};
    if (b.at_risk) return {"at_risk", deadline_standing(b)};
    if (b.restoring) {
      return {"restoring",
              (b.starts > 1 ? "restarted on " + b.report_node + " (restoring its checkpoint)"
                            : "started on " + b.report_node) +
                  "; no report from it yet"};
    }
    return {"", b.notice};
  }
  if (book.round() == 0 || book.last_round_time() < b.submit_time) {
    return {"new", "no round has considered it yet"};
  }
  // Room on the GPU types it may use, as the last round saw the cluster's nodes that were up.
  const int need =
      b.spec.adaptivity == Adaptivity::rigid && b.spec.gpus > 0 ? b.spec.gpus : b.spec.min_gpus;
  int most_up = 0, most_free = 0;
  std::string types;
  try {
    Cluster c = parse_cluster(Node(book.last_cluster(), "last round", "cluster"));
    std::map<std::string, int> used;
    for (const BookJob* a : book.active()) {
      if (a->placed) used[a->placed->gpu_type] += a->placed->gpus();
    }
    for (const auto& t : c.types) {
      if (!b.spec.allows_type(t.name)) continue;
      types += (types.empty() ? "" : ", ") + t.name;
      most_up = std::max(most_up, t.capacity());
      most_free = std::max(most_free, t.capacity() - used[t.name]);
    }
  } catch (const Error&) {
    most_up = most_free = need;  // a cluster that does not read: say what the policy said
  }
  std::string note = waiting_note(book, b.spec.name);
  if (!note.empty()) note = "; placer: " + note;
  if (most_up < need) {
    return {"resources", "no room: it needs " + need_text(need) + " of one type (" +
                             (types.empty() ? "none of its types is up" : types) + "), at most " +
                             std::to_string(most_up) + " are up" + note};
  }
  if (most_free < need) {
    return {"resources", "no room: it needs " + need_text(need) + " of one type (" + types +
                             "), at most " + std::to_string(most_free) +
                             " are free; the others run jobs" + note};
  }
  return {"priority", "there is room (" + std::to_string(most_free) + " free of one of " + types +
                          "), but fairness and goodput put other jobs first" + note};
}

// What a rho rests on: "finished" (its real completion time), "throughput" (an estimate from
// the job's measured throughput and progress), "model" (an estimate from the throughput
// model alone: its workers have not measured a step time on its GPUs yet); null: no rho.
json rho_basis(const FairnessBook& f, std::optional<double> rho, bool ended) {
  if (!rho) return nullptr;
  if (ended) return "finished";
  return f.measured ? "throughput" : "model";
}

// Finish-time fairness (job_book.hpp: job_rho, app_rho): rho, null without one; "fair":
// N_avg and the last estimate's T_sh and T_id (null before the first); rho_measured: the
// shared time is the job's (app's) real one, it ended; rho_basis: rho_basis() above.
void add_rho(json& row, const FairnessBook& f, std::optional<double> rho, bool ended) {
  row["rho"] = rho ? json(*rho) : json(nullptr);
  row["rho_measured"] = rho && ended;
  row["rho_basis"] = rho_basis(f, rho, ended);
  row["fair"] =
      f.t_id > 0 ? json{{"n_avg", f.n_avg()}, {"t_sh", f.t_sh}, {"t_id", f.t_id}} : json(nullptr);
}

// explain's line on the job's finish-time fairness ("" without a figure). An estimate says
// what it rests on, and its finish is never before the job's age.
std::string fairness_text(const BookJob& b, double now) {
  const auto rho = job_rho(b, now);
  if (!rho) return "";
  const bool measured = b.state == Lifecycle::finished;
  const double shared =
      measured ? b.end_time - b.submit_time : std::max(b.fair.t_sh, now - b.submit_time);
  const std::string basis =
      b.fair.measured
          ? ", estimated from its measured throughput: "
          : ", an estimate from the throughput model (" +
                (b.spec.model.empty() ? "its profile" : "catalog model " + b.spec.model) +
                "; its workers have not reported a step time here yet): ";
  return "fairness: rho " + num(*rho, 2) + (measured ? ", measured: it took " : basis) +
         cli::duration(shared) + (measured ? "" : " from submission to its end here") + ", " +
         cli::duration(b.fair.t_id) + " alone on its fair share (N_avg " + num(b.fair.n_avg(), 2) +
         ")" + (*rho > 1 ? "; rho > 1: it would finish sooner alone on its share" : "");
}

// Over rows with a rho: how many, how many above 1 (unfair: sooner alone on a fair share),
// their share and the worst rho (null when none has one).
json rho_summary(const json& rows) {
  int count = 0, unfair = 0;
  double worst = 0;
  for (const auto& r : rows) {
    if (!r.contains("rho") || !r["rho"].is_number()) continue;
    const double rho = r["rho"].get<double>();
    ++count;
    unfair += rho > 1.0 && r.value("rho_basis", json()) != "model";  // a guess is no verdict
    worst = std::max(worst, rho);
  }
  return {{"count", count},
          {"unfair", unfair},
          {"unfair_fraction", count ? static_cast<double>(unfair) / count : 0.0},
          {"worst_rho", count ? json(worst) : json(nullptr)}};
}

json job_row(const JobBook& book, const BookJob& b, double now, double silent_after) {
  json nodes = json::array();
  if (b.placed) {
    for (const auto& ng : b.placed->nodes) nodes.push_back({{"name", ng.node}, {"gpus", ng.gpus}});
  }
  const bool ended = is_ended(b.state);
  json row = {{"name", b.spec.name},
              {"state", to_string(b.state)},
              {"identity", b.identity},
              {"user", job_user(b)},
              {"run_as", b.run_as ? json(describe_run_as(*b.run_as)) : json(nullptr)},
              {"submitted", b.submit_time},
              {"age", std::max(0.0, (ended ? b.end_time : now) - b.submit_time)},
              {"gpu_type", b.placed ? json(b.placed->gpu_type) : json(nullptr)},
              {"nodes", nodes},
              {"gpus", b.placed ? b.placed->gpus() : 0},
              {"batch_size", nullptr},
              {"local_bsz", nullptr},
              {"accum_steps", nullptr},
              {"restarts", std::max(0, b.starts - 1)},
              {"progress", b.progress},
              {"step", b.step},
              {"lost_steps", b.lost_steps},
              {"peer_restarts", b.peer_restarts},
              {"peer_retries_used", b.peer_retries_used},
              {"notice", b.notice},
              {"reports", b.reports},
              {"reason", b.reason},
              {"exit_status", b.exit_status ? json(*b.exit_status) : json(nullptr)},
              {"ended", ended ? json(b.end_time) : json(nullptr)}};
  if (b.placed) put_batch_setting(row, b.placed->batch);
  row["app"] = b.spec.app.empty() ? json(nullptr) : json(b.spec.app);
  row["hparams"] = hparams_json(b.spec.hparams);
  row["fraction"] = b.fraction;
  row["class"] = to_string(b.spec.job_class);
  row["deadline"] = b.spec.deadline ? json(*b.spec.deadline) : json(nullptr);
  row["projected_finish"] = b.projected_finish ? json(*b.projected_finish) : json(nullptr);
  row["at_risk"] = b.at_risk;
  add_rho(row, b.fair, job_rho(b, now), b.state == Lifecycle::finished);
  row["silent_for"] = silent_for(b, now);
  row["held_by"] = identity_name(b.held_by);
  row["reason_code"] = "";
  if (!ended) {
    auto [code, detail] = why_of(book, b, now, silent_after);
    row["reason_code"] = code;
    row["reason"] = detail;
  }
  return row;
}

}  // namespace

// An app: its scheduler and phase, how many of its trials are in each state, and its best
// metric so far (the trials' latest reports).
json app_row(const JobBook& book, const BookApp& a) {
  std::map<std::string, int> count;
  std::optional<double> best;
  std::string best_trial;
  for (const auto& t : a.trials) {
    const BookJob* b = book.find(t);
    if (!b) {
      ++count["forgotten"];
      continue;
    }
    ++count[is_ended(b->state) ? to_string(b->state) : "live"];
    auto m = latest_metric(*b, a.spec.metric);
    if (m && (!best || (a.spec.minimize ? *m < *best : *m > *best))) {
      best = m;
      best_trial = t;
    }
  }
  const char* state = count["live"] > 0        ? "running"
                      : count["finished"] > 0  ? "finished"
                      : count["cancelled"] > 0 ? "cancelled"
                                               : "failed";
  const bool halving = a.spec.scheduler.kind != AppSchedulerKind::none;
  // Hyperband: each bracket's phase (1-based), phases and trials.
  json brackets = json::array();
  if (a.phases.size() > 1) {
    for (std::size_t k = 0; k < a.phases.size(); ++k) {
      const int b = static_cast<int>(k);
      brackets.push_back({{"phase", a.phases[k] + 1},
                          {"phases", bracket_scheduler(a.spec.scheduler, b).rungs},
                          {"trials", std::count(a.bracket.begin(), a.bracket.end(), b)}});
    }
  }
  json row = {{"name", a.spec.name},
              {"state", state},
              {"identity", a.identity},
              {"submitted", a.submit_time},
              {"scheduler", to_string(a.spec.scheduler.kind)},
              {"eta", a.spec.scheduler.eta},
              {"phase", halving ? a.phase(0) + 1 : 1},
              {"phases", halving ? a.spec.scheduler.rungs : 1},
              {"brackets", brackets},
              {"metric", a.spec.metric},
              {"direction", a.spec.minimize ? "min" : "max"},
              {"trials", a.trials},
              {"live", count["live"]},
              {"stopped", count["stopped"]},
              {"finished", count["finished"]},
              {"failed", count["failed"]},
              {"cancelled", count["cancelled"]},
              {"best", best ? json(*best) : json(nullptr)},
              {"best_trial", best ? json(best_trial) : json(nullptr)}};
  add_rho(row, a.fair, app_rho(book, a), count["live"] == 0);
  return row;
}

// An app still in the inbox: its row as app_row makes it, state "submitted", every trial
// live.
json pending_app_row(const JobBook& book, const PendingRequest& p, const PendingApp& x) {
  BookApp a;
  a.spec = x.spec;
  a.identity = p.identity;
  a.submit_time = p.time;
  a.trials = x.trials;
  a.init_brackets();
  json row = app_row(book, a);
  row["state"] = "submitted";
  row["live"] = a.trials.size();
  return row;
}

namespace {

json pending_row(const std::string& name, const std::string& state, const std::string& identity,
                 double time, const std::string& reason, double now) {
  json row = {{"name", name},
              {"state", state},
              {"identity", identity},
              {"user", identity_user(identity)},
              {"submitted", time},
              {"age", std::max(0.0, now - time)},
              {"gpu_type", nullptr},
              {"nodes", json::array()},
              {"gpus", 0},
              {"batch_size", nullptr},
              {"local_bsz", nullptr},
              {"accum_steps", nullptr},
              {"restarts", 0},
              {"progress", 0},
              {"step", 0},
              {"lost_steps", 0},
              {"peer_restarts", 0},
              {"peer_retries_used", 0},
              {"notice", ""},
              {"silent_for", 0},
              {"reports", 0},
              {"reason", reason},
              {"reason_code", state == "rejected" ? "" : "inbox"},
              {"held_by", ""},
              {"exit_status", nullptr},
              {"ended", nullptr},
              {"app", nullptr},
              {"hparams", json::object()},
              {"fraction", 0}};
  add_rho(row, FairnessBook{}, std::nullopt, false);
  return row;
}

}  // namespace

std::string identity_user(const std::string& identity) {
  std::string id = identity_name(identity);
  auto colon = id.find(':');
  return colon == std::string::npos ? id : id.substr(colon + 1);
}

std::string job_user(const BookJob& b) {
  if (b.run_as && !b.run_as->user.empty()) return b.run_as->user;
  return identity_user(b.identity);
}

std::vector<std::string> parse_state_filter(const std::vector<std::string>& values,
                                            const std::string& flag) {
  static const std::set<std::string> known = {"queued",    "running", "finished",  "failed",
                                              "cancelled", "stopped", "submitted", "rejected"};
  std::vector<std::string> out;
  for (const auto& v : values) {
    std::size_t start = 0;
    while (start <= v.size()) {
      std::size_t comma = v.find(',', start);
      std::string s =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!known.count(s)) {
        throw Error(ExitStatus::usage, flag +
                                           ": expected queued, running, finished, failed, "
                                           "cancelled, stopped, submitted or rejected, got \"" +
                                           s + "\"");
      }
      out.push_back(s);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

double parse_since(const std::string& text, double now, const std::string& flag) {
  if (auto ago = duration_seconds(text)) return now - *ago;
  if (text.size() <= 12 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      !text.empty()) {
    return std::stod(text);
  }
  if (auto t = utc_seconds(text)) return *t;
  throw Error(ExitStatus::usage,
              flag +
                  ": expected seconds since the epoch, a UTC date or time "
                  "(2026-12-01, 2026-12-01T08:00[:00][Z]) or a time ago (90m, 12h, 7d), "
                  "got \"" +
                  text + "\"");
}

namespace {

// Whether a row (a job's or an app's) passes the filter.
bool keep_row(const json& row, const JobFilter& f) {
  const std::string state = row.value("state", "");
  if (!f.states.empty() && std::find(f.states.begin(), f.states.end(), state) == f.states.end()) {
    return false;
  }
  if (!f.users.empty()) {
    const std::string identity = row.value("identity", "");
    const std::string user_id = identity_name(identity);
    const std::string user = identity_user(identity);
    const std::string shown = row.value("user", user);
    if (std::none_of(f.users.begin(), f.users.end(), [&](const std::string& u) {
          return u == user || u == user_id || u == shown;
        })) {
      return false;
    }
  }
  return !(f.since > 0 && row.contains("ended") && row["ended"].is_number() &&
           row["ended"].get<double>() < f.since);
}

}  // namespace

std::string hparams_text(const json& values) {
  std::string out;
  if (!values.is_object()) return out;
  for (const auto& [k, v] : values.items()) {
    out += (out.empty() ? "" : " ") + k + "=" +
           (v.is_number() ? hparam_text(v.get<double>()) : v.dump());
  }
  return out;
}

json hparams_json(const std::map<std::string, double>& values) {
  json out = json::object();
  for (const auto& [k, v] : values) out[k] = v;
  return out;
}

json filter_jobs(json doc, const JobFilter& f) {
  if (!doc.contains("data") || !doc["data"].contains("jobs")) return doc;
  json kept = json::array();
  for (const auto& row : doc["data"]["jobs"]) {
    if (keep_row(row, f)) kept.push_back(row);
  }
  doc["data"]["jobs"] = kept;
  // Apps by the same rules (an app's state: running, finished, cancelled, failed or
  // submitted); its trials are among the jobs.
  if (doc["data"].contains("apps") && doc["data"]["apps"].is_array()) {
    json apps = json::array();
    for (const auto& row : doc["data"]["apps"]) {
      if (keep_row(row, f)) apps.push_back(row);
    }
    doc["data"]["apps"] = apps;
  }
  return doc;
}

json envelope(const std::string& kind, const json& data) {
  return {{"apiVersion", kApiVersion},
          {"kind", kind},
          {"metadata", {{"generator", "sia-ctl"}}},
          {"data", data}};
}

json job_status_list(const JobBook& book, const std::vector<PendingRequest>& pending,
                     const std::vector<std::string>& jobs, double now, double silent_after) {
  std::map<std::string, json> rows;
  for (const auto& r : book.rejections()) {
    rows[r.job] = pending_row(r.job, "rejected", r.identity, r.time, r.reason, now);
  }
  for (const auto& [name, b] : book.jobs()) rows[name] = job_row(book, b, now, silent_after);
  for (const auto& p : pending) {
    for (const auto& name : p.jobs) {
      if (p.type == "submit" && !book.find(name)) {
        rows[name] =
            pending_row(name, "submitted", p.identity, p.time, "the next round takes it in", now);
        for (const auto& x : p.apps) {  // a trial: its app and values
          for (std::size_t t = 0; t < x.trials.size(); ++t) {
            if (x.trials[t] != name) continue;
            rows[name]["app"] = x.spec.name;
            rows[name]["hparams"] = x.hparams[t];
          }
        }
      } else if (p.type != "submit" && rows.count(name) &&
                 (rows[name]["state"] == "submitted" ||
                  !is_ended(parse_lifecycle(rows[name]["state"].get<std::string>())
                                .value_or(Lifecycle::finished)))) {
        rows[name]["reason_code"] = "request";
        rows[name]["reason"] =
            p.type + " requested by " + identity_name(p.identity) + "; the next round takes it in";
      }
    }
  }
  json list = json::array();
  json apps = json::array();
  if (jobs.empty()) {
    for (auto& [name, row] : rows) list.push_back(row);
    for (const auto& [name, a] : book.apps()) apps.push_back(app_row(book, a));
    for (const auto& p : pending) {
      for (const auto& x : p.apps) {
        if (!book.find_app(x.spec.name)) apps.push_back(pending_app_row(book, p, x));
      }
    }
  } else {
    std::set<std::string> shown;
    auto show = [&](const std::string& name) {
      auto it = rows.find(name);
      if (it == rows.end()) {
        throw Error(ExitStatus::no_input, "job \"" + name + "\" is not known to the controller");
      }
      if (shown.insert(name).second) list.push_back(it->second);
    };
    for (const auto& name : jobs) {
      const std::vector<std::string>* trials = nullptr;  // an app: it and its trials
      const PendingRequest* request = nullptr;
      if (const BookApp* a = book.find_app(name)) {
        apps.push_back(app_row(book, *a));
        trials = &a->trials;
      } else if (const PendingApp* x = find_pending_app(pending, name, &request)) {
        apps.push_back(pending_app_row(book, *request, *x));  // still in the inbox
        trials = &x->trials;
      }
      if (!trials) {
        show(name);
        continue;
      }
      for (const auto& t : *trials) {
        if (rows.count(t)) show(t);
      }
    }
  }
  const json fairness = {{"jobs", rho_summary(list)}, {"apps", rho_summary(apps)}};
  return envelope(
      "JobStatusList",
      {{"jobs", list}, {"apps", apps}, {"fairness", fairness}, {"round", book.round()}});
}

json node_list(const JobBook& book, double, const json& live) {
  std::map<std::string, json> rows;
  const json& cluster = book.last_cluster();
  if (cluster.is_object() && cluster.contains("node_groups")) {
    // Expand the groups as the cluster file does.
    std::map<std::string, int> per_type;
    for (const auto& g : cluster["node_groups"]) {
      std::string type = g.value("gpu_type", "");
      int count = g.value("count", 0);
      auto names = g.value("names", std::vector<std::string>{});
      auto addrs = g.value("addresses", std::vector<std::string>{});
      std::string prefix = g.value("name_prefix", type + "-");
      for (int k = 0; k < count; ++k) {
        std::string name =
            k < static_cast<int>(names.size()) ? names[k] : prefix + std::to_string(per_type[type]);
        ++per_type[type];
        rows[name] = {{"name", name},
                      {"gpu_type", type},
                      {"gpus", g.value("gpus_per_node", 0)},
                      {"address", k < static_cast<int>(addrs.size()) ? addrs[k] : name}};
      }
    }
  }
  for (const auto& [name, n] : book.nodes()) {
    json& r = rows[name];
    r["name"] = name;
    r["state"] = n.last_check == 0 ? "unknown" : (n.up ? "up" : "down");
    r["last_seen"] = n.last_seen > 0 ? json(n.last_seen) : json(nullptr);
    r["error"] = n.error;
    r["delivery_error"] = n.delivery_error;
  }
  if (live.is_array()) {
    for (const auto& a : live) {
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string()) continue;
      json& r = rows[a["name"].get<std::string>()];
      r["name"] = a["name"];
      for (const char* k : {"gpu_type", "gpus", "address"}) {
        if ((!r.contains(k) || r[k].is_null()) && a.contains(k) && !a[k].is_null()) r[k] = a[k];
      }
      r["state"] = a.value("state", "unknown");
      r["last_seen"] = a.value("last_seen", json());
      if (a.contains("lease")) r["lease"] = a["lease"];
    }
  }
  std::map<std::string, std::vector<std::string>> jobs_on;
  for (const auto& [job, b] : book.jobs()) {
    if (!b.placed || is_ended(b.state)) continue;
    for (const auto& ng : b.placed->nodes)
      jobs_on[ng.node].push_back(job + ":" + exec::join_ints(ng.gpus));
  }
  json list = json::array();
  for (auto& [name, r] : rows) {
    if (!r.contains("state")) r["state"] = "unknown";
    if (!r.contains("last_seen")) r["last_seen"] = nullptr;
    if (!r.contains("error")) r["error"] = "";
    if (!r.contains("delivery_error")) r["delivery_error"] = "";
    if (!r.contains("gpu_type")) r["gpu_type"] = nullptr;
    if (!r.contains("gpus")) r["gpus"] = nullptr;
    if (!r.contains("address")) r["address"] = name;
    r["jobs"] = jobs_on[name];
    r["reserved"] = book.last_reserved().count(name) > 0;
    list.push_back(r);
  }
  return envelope("NodeList", {{"nodes", list}, {"round", book.round()}});
}

json job_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                     const std::string& job, double now, double silent_after, int peer_retries) {
  if (book.find_app(job) || find_pending_app(pending, job)) {
    return app_explanation(book, pending, job, now);
  }
  json data = {{"job", job}, {"round", book.round()}};
  json lines = json::array();
  const BookJob* b = book.find(job);
  if (!b) {
    for (const auto& p : pending) {
      if (p.type == "submit" && std::count(p.jobs.begin(), p.jobs.end(), job)) {
        data["state"] = "submitted";
        lines.push_back("submitted by " + identity_name(p.identity) +
                        "; it waits in the inbox for the next round to take it in");
        data["lines"] = lines;
        return envelope("JobExplanation", data);
      }
    }
    for (const auto& r : book.rejections()) {
      if (r.job == job) {
        data["state"] = "rejected";
        lines.push_back("its submission was refused: " + r.reason);
        data["lines"] = lines;
        return envelope("JobExplanation", data);
      }
    }
    throw Error(ExitStatus::no_input, "job \"" + job + "\" is not known to the controller");
  }
  data["state"] = to_string(b->state);
  data["placement"] = describe_placed(b->placed);
  data["run_as"] = b->run_as ? json(describe_run_as(*b->run_as)) : json(nullptr);
  data["peer_restarts"] = b->peer_restarts;
  data["peer_retries_used"] = b->peer_retries_used;
  data["peer_retries"] = peer_retries;
  if (b->run_as) lines.push_back("runs as " + describe_run_as(*b->run_as) + " on its nodes");
  if (!b->spec.app.empty()) {  // a trial: its search and its values
    data["app"] = b->spec.app;
    data["hparams"] = hparams_json(b->spec.hparams);
    const std::string values = hparams_text(data["hparams"]);
    lines.push_back("trial of app " + b->spec.app + (values.empty() ? "" : " with " + values) +
                    " (sia-ctl explain " + b->spec.app + ": the search)");
  }
  if (is_ended(b->state)) {
    lines.push_back(std::string(to_string(b->state)) + ": " + b->reason);
    lines.push_back("it was started " + std::to_string(b->starts) + " time(s) and is never " +
                    "scheduled again");
    if (auto peers = peer_restarts_text(*b, peer_retries); !peers.empty()) lines.push_back(peers);
    if (auto f = fairness_text(*b, now); !f.empty()) lines.push_back(f);
    if (b->log_tail) data["log_tail"] = log_tail_to_json(*b->log_tail);
    data["lines"] = lines;
    return envelope("JobExplanation", data);
  }
  const json* alloc = find_named(book.last_allocation(), "jobs", job);
  const json* placed = find_named(book.last_placement(), "jobs", job);
  data["allocation"] = alloc ? *alloc : json(nullptr);
  const std::string note = placed ? placed->value("note", "") : waiting_note(book, job);
  data["note"] = note;
  // Queue position: waiting jobs in submission order.
  int position = 0, waiting = 0;
  for (const BookJob* a : book.active()) {
    if (a->placed) continue;
    ++waiting;
    if (a->spec.name == job) position = waiting;
  }
  data["queue_position"] = b->placed ? json(nullptr) : json(position);
  data["waiting"] = waiting;
  data["reason_code"] = "";
  if (auto [code, detail] = why_of(book, *b, now, silent_after);
      code == "held" || code == "requeue" || code == "resources" || code == "priority" ||
      code == "restoring") {
    data["reason_code"] = code;
    lines.push_back(code + ": " + detail);
  }
  if (b->done_reported) lines.push_back("its workers reported done: it ends when they exit");
  if (!is_ended(b->state)) {
    if (auto standing = deadline_standing(*b); !standing.empty()) lines.push_back(standing);
  }
  if (auto quiet = silence(*b, now, silent_after); !quiet.empty()) lines.push_back(quiet);
  if (!b->notice.empty()) lines.push_back("warning: " + b->notice);
  if (auto peers = peer_restarts_text(*b, peer_retries); !peers.empty()) lines.push_back(peers);
  if (b->lost_steps > 0) {
    lines.push_back(std::to_string(b->lost_steps) +
                    " steps lost to starts that resumed behind its last report (an older "
                    "checkpoint, or none: is controller.checkpoint_root shared by every node?)");
  }
  if (!alloc && !placed && !b->placed) {
    lines.push_back("waits: no round has considered it yet (submitted " +
                    cli::duration(std::max(0.0, now - b->submit_time)) + " ago)");
  }
  if (b->placed) {
    std::int64_t since = b->history.empty() ? book.round() : b->history.back().round;
    lines.push_back("runs on " + describe_placed(b->placed) + " (" +
                    std::to_string(b->placed->gpus()) + " GPU(s), batch " +
                    std::to_string(b->placed->batch.global) + " = " +
                    std::to_string(b->placed->batch.local) + " per GPU x " +
                    std::to_string(b->placed->batch.micro_steps()) +
                    " micro-step(s)) since round " + std::to_string(since));
  } else if (alloc || placed) {
    std::string why = alloc ? alloc->value("reason", "") : "";
    if (alloc && alloc->contains("config") && alloc->at("config").is_object()) {
      why = "allocated " + config_text(alloc->at("config")) + " but not placed" +
            (note.empty() ? "" : ": " + note);
    } else if (why.empty()) {
      why = note.empty() ? "not allocated" : note;
    }
    lines.push_back("waits: " + why + " (queue position " + std::to_string(position) + " of " +
                    std::to_string(waiting) + " waiting, in submission order)");
  }
  if (alloc && alloc->contains("config") && alloc->at("config").is_object()) {
    std::string l = "solver (" + book.last_allocation().value("policy", std::string("?")) +
                    "): " + config_text(alloc->at("config")) + ", goodput " +
                    num(alloc->value("goodput", 0.0), 3);
    if (alloc->contains("explain") && alloc->at("explain").is_object()) {
      const json& e = alloc->at("explain");
      l += ", restart factor " + num(e.value("restart_factor", 1.0), 3);
      if (e.value("pinned", false)) l += ", pinned (restoring or not preemptible)";
      int cap = e.value("max_gpus", 0);
      if (cap > 0 && alloc->at("config").value("gpus", 0) >= cap) {
        l += ", at its scale-up cap of " + std::to_string(cap) + " GPU(s)";
      }
    }
    lines.push_back(l);
  }
  if (alloc && alloc->contains("explain") && alloc->at("explain").is_object()) {
    const json& e = alloc->at("explain");
    if (e.contains("alternative") && e["alternative"].is_object()) {
      lines.push_back("best alternative: " + config_text(e["alternative"]) + ", goodput " +
                      num(e["alternative"].value("goodput", 0.0), 3));
    }
  }
  if (b->placed && !note.empty()) lines.push_back("placer: " + note);
  if (auto f = fairness_text(*b, now); !f.empty()) lines.push_back(f);
  data["lines"] = lines;
  return envelope("JobExplanation", data);
}

std::set<std::string> pending_submissions(const std::vector<PendingRequest>& pending) {
  std::set<std::string> out;
  for (const auto& p : pending) {
    if (p.type == "submit") out.insert(p.jobs.begin(), p.jobs.end());
  }
  return out;
}

const PendingApp* find_pending_app(const std::vector<PendingRequest>& pending,
                                   const std::string& name, const PendingRequest** request) {
  for (const auto& p : pending) {
    for (const auto& a : p.apps) {
      if (a.spec.name != name) continue;
      if (request) *request = &p;
      return &a;
    }
  }
  return nullptr;
}

std::vector<PendingRequest> pending_requests(const StateStore& store) {
  std::vector<PendingRequest> out;
  for (const auto& f : store.inbox_files()) {
    try {
      json r = store.read_inbox(f);
      PendingRequest p;
      p.type = r.value("type", "");
      p.identity = r.value("identity", "?");
      p.time = r.contains("time") && r["time"].is_number() ? r["time"].get<double>() : 0;
      if (r.contains("jobs") && r["jobs"].is_array()) {
        for (const auto& j : r["jobs"]) {
          if (j.is_string()) p.jobs.push_back(j.get<std::string>());
          if (j.is_object() && j.contains("name") && j["name"].is_string()) {
            p.jobs.push_back(j["name"].get<std::string>());
            if (p.type == "submit" && j.value("class", "") == "guaranteed") {
              p.guaranteed.push_back(parse_job_spec(Node(j, store.path("inbox/" + f), "jobs")));
            }
          }
        }
      }
      if (p.type == "submit" && r.contains("apps") && r["apps"].is_array()) {
        for (const auto& a : r["apps"]) {
          PendingApp x;
          x.spec = parse_app_spec(Node(a, store.path("inbox/" + f), "apps"));
          for (const auto& j : r["jobs"]) {
            if (j.is_object() && j.value("app", std::string()) == x.spec.name) {
              x.trials.push_back(j.value("name", std::string()));
              x.hparams.push_back(j.contains("hparams") && j["hparams"].is_object()
                                      ? j["hparams"]
                                      : json::object());
            }
          }
          p.apps.push_back(std::move(x));
        }
      }
      out.push_back(std::move(p));
    } catch (const Error&) {
      // Taken in (and removed) by a round meanwhile, or malformed: the round reports it.
    }
  }
  return out;
}

}  // namespace sia::ctl
