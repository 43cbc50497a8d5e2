#include "ctl/client_docs.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
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

json job_row(const BookJob& b, double now, double silent_after) {
  json nodes = json::array();
  if (b.placed) {
    for (const auto& ng : b.placed->nodes) nodes.push_back({{"name", ng.node}, {"gpus", ng.gpus}});
  }
  const bool ended = is_ended(b.state);
  json row = {{"name", b.spec.name},
              {"state", to_string(b.state)},
              {"identity", b.identity},
              {"submitted", b.submit_time},
              {"age", std::max(0.0, (ended ? b.end_time : now) - b.submit_time)},
              {"gpu_type", b.placed ? json(b.placed->gpu_type) : json(nullptr)},
              {"nodes", nodes},
              {"gpus", b.placed ? b.placed->gpus() : 0},
              {"batch_size", b.placed ? json(b.placed->batch_size) : json(nullptr)},
              {"local_bsz", b.placed ? json(b.placed->local_bsz) : json(nullptr)},
              {"accum_steps", b.placed ? json(b.placed->accum_steps) : json(nullptr)},
              {"restarts", std::max(0, b.starts - 1)},
              {"progress", b.progress},
              {"step", b.step},
              {"lost_steps", b.lost_steps},
              {"notice", b.notice},
              {"reports", b.reports},
              {"reason", b.reason},
              {"exit_status", b.exit_status ? json(*b.exit_status) : json(nullptr)},
              {"ended", ended ? json(b.end_time) : json(nullptr)}};
  row["silent_for"] = silent_for(b, now);
  if (b.done_reported && !ended) {
    row["reason"] = "its workers reported done; ending";
  } else if (auto quiet = silence(b, now, silent_after); !ended && !quiet.empty()) {
    row["reason"] = quiet;
  } else if (!ended && !b.notice.empty()) {
    row["reason"] = b.notice;
  }
  return row;
}

json pending_row(const std::string& name, const std::string& state, const std::string& identity,
                 double time, const std::string& reason, double now) {
  return {{"name", name},
          {"state", state},
          {"identity", identity},
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
          {"notice", ""},
          {"silent_for", 0},
          {"reports", 0},
          {"reason", reason},
          {"exit_status", nullptr},
          {"ended", nullptr}};
}

}  // namespace

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
  for (const auto& [name, b] : book.jobs()) rows[name] = job_row(b, now, silent_after);
  for (const auto& p : pending) {
    for (const auto& name : p.jobs) {
      if (p.type == "submit" && !book.find(name)) {
        rows[name] = pending_row(name, "submitted", p.identity, p.time,
                                 "in the inbox: the next round takes it in", now);
      } else if (p.type == "cancel" && rows.count(name) &&
                 !is_ended(parse_lifecycle(rows[name]["state"].get<std::string>())
                               .value_or(Lifecycle::finished))) {
        rows[name]["reason"] = "cancel requested by " + p.identity + "; the next round stops it";
      }
    }
  }
  json list = json::array();
  if (jobs.empty()) {
    for (auto& [name, row] : rows) list.push_back(row);
  } else {
    std::set<std::string> shown;
    for (const auto& name : jobs) {
      auto it = rows.find(name);
      if (it == rows.end()) {
        throw Error(ExitStatus::no_input, "job \"" + name + "\" is not known to the controller");
      }
      if (shown.insert(name).second) list.push_back(it->second);
    }
  }
  return envelope("JobStatusList", {{"jobs", list}, {"round", book.round()}});
}

json node_list(const JobBook& book, double) {
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
    list.push_back(r);
  }
  return envelope("NodeList", {{"nodes", list}, {"round", book.round()}});
}

json job_explanation(const JobBook& book, const std::vector<PendingRequest>& pending,
                     const std::string& job, double now, double silent_after) {
  json data = {{"job", job}, {"round", book.round()}};
  json lines = json::array();
  const BookJob* b = book.find(job);
  if (!b) {
    for (const auto& p : pending) {
      if (p.type == "submit" && std::count(p.jobs.begin(), p.jobs.end(), job)) {
        data["state"] = "submitted";
        lines.push_back("submitted by " + p.identity +
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
  if (is_ended(b->state)) {
    lines.push_back(std::string(to_string(b->state)) + ": " + b->reason);
    lines.push_back("it was started " + std::to_string(b->starts) + " time(s) and is never " +
                    "scheduled again");
    if (b->log_tail) data["log_tail"] = log_tail_to_json(*b->log_tail);
    data["lines"] = lines;
    return envelope("JobExplanation", data);
  }
  const json* alloc = find_named(book.last_allocation(), "jobs", job);
  const json* placed = find_named(book.last_placement(), "jobs", job);
  data["allocation"] = alloc ? *alloc : json(nullptr);
  std::string note;
  if (placed) {
    note = placed->value("note", "");
  } else if (book.last_placement().is_object() &&
             book.last_placement().contains("waiting_reasons") &&
             book.last_placement()["waiting_reasons"].contains(job)) {
    note = book.last_placement()["waiting_reasons"][job].get<std::string>();
  }
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
  if (b->done_reported) lines.push_back("its workers reported done: it ends when they exit");
  if (auto quiet = silence(*b, now, silent_after); !quiet.empty()) lines.push_back(quiet);
  if (!b->notice.empty()) lines.push_back("warning: " + b->notice);
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
                    num(b->placed->batch_size, 0) + " = " + std::to_string(b->placed->local_bsz) +
                    " per GPU x " + std::to_string(b->placed->accum_steps + 1) +
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
  data["lines"] = lines;
  return envelope("JobExplanation", data);
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
          }
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
