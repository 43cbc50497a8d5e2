#include "ctl/history.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "cli/table.hpp"
#include "core/csv.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/client_render.hpp"
#include "ctl/slurm_history.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

json history_row(const BookJob& b, double now) {
  const bool ended = is_ended(b.state);
  double stop = ended ? b.end_time : now;
  // A finished job's workers said "done" before the round that saw them exit.
  if (b.state == Lifecycle::finished && b.done_reported && b.last_report_time > 0) {
    stop = std::min(stop, b.last_report_time);
  }
  const std::optional<double> rho = job_rho(b, now);
  json gpu_seconds = json::object();
  double run_time = 0, gpu_total = 0;
  json started = nullptr;
  for (std::size_t i = 0; i < b.history.size(); ++i) {
    const auto& h = b.history[i];
    if (!h.placed) continue;
    if (started.is_null()) started = h.time;
    const double until = i + 1 < b.history.size() ? b.history[i + 1].time : stop;
    const double span = std::max(0.0, std::min(until, stop) - h.time);
    const double gpu = span * h.placed->gpus();
    run_time += span;
    gpu_total += gpu;
    gpu_seconds[h.placed->gpu_type] = gpu_seconds.value(h.placed->gpu_type, 0.0) + gpu;
  }
  json wait = nullptr;
  if (!started.is_null()) {
    wait = std::max(0.0, started.get<double>() - b.submit_time);
  } else if (!ended) {
    wait = std::max(0.0, now - b.submit_time);
  }
  return {{"name", b.spec.name},
          {"identity", b.identity},
          {"user", job_user(b)},
          {"state", to_string(b.state)},
          {"submitted", b.submit_time},
          {"started", started},
          {"ended", ended ? json(b.end_time) : json(nullptr)},
          {"wait", wait},
          {"run_time", run_time},
          {"gpu_seconds", gpu_seconds},
          {"gpu_hours", gpu_total / 3600},
          {"restarts", std::max(0, b.starts - 1)},
          {"lost_steps", b.lost_steps},
          {"peer_restarts", b.peer_restarts},
          {"step", b.step},
          {"rho", rho ? json(*rho) : json(nullptr)},
          {"exit_status", b.exit_status ? json(*b.exit_status) : json(nullptr)},
          {"reason", b.reason}};
}

// A row's field; null when absent (a document from another version).
json field(const json& row, const char* key) {
  return row.value(key, json());
}

std::string time_text(const json& t) {
  return t.is_number() ? cli::utc_time(t.get<double>()) : "";
}

std::string number_text(const json& v, int digits) {
  return v.is_number() ? cli::fixed(v.get<double>(), digits) : "";
}

// GPU types in the order rows first name them.
std::vector<std::string> gpu_types(const json& rows) {
  std::vector<std::string> types;
  for (const auto& r : rows) {
    const json gs = r.value("gpu_seconds", json::object());
    for (const auto& [type, s] : gs.items()) {
      if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(type);
    }
  }
  return types;
}

// Whether the rows carry Slurm's jobs (slurm_history.hpp): the rounds ran through Slurm.
bool has_slurm(const json& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const json& r) { return r.contains("slurm"); });
}

}  // namespace

json job_history(const JobBook& book, double now) {
  std::vector<const BookJob*> jobs;
  for (const auto& [name, b] : book.jobs()) jobs.push_back(&b);
  std::sort(jobs.begin(), jobs.end(),
            [](const BookJob* a, const BookJob* b) { return a->order < b->order; });
  json rows = json::array();
  for (const BookJob* b : jobs) rows.push_back(history_row(*b, now));
  return envelope("JobHistory", {{"jobs", rows}, {"now", now}});
}

std::string history_csv(const json& doc) {
  const json rows = doc.value("data", json::object()).value("jobs", json::array());
  const auto types = gpu_types(rows);
  std::string out = "name,user,identity,state,submitted,started,ended,wait_s,run_time_s,gpu_hours";
  for (const auto& t : types) out += "," + csv_field("gpu_hours_" + t);
  out += ",restarts,lost_steps,rho,exit_status,reason";
  const bool slurm = has_slurm(rows);
  out += slurm ? ",slurm_jobs\n" : "\n";
  for (const auto& r : rows) {
    std::vector<std::string> f = {r.value("name", ""),
                                  r.value("user", ""),
                                  r.value("identity", ""),
                                  r.value("state", ""),
                                  time_text(field(r, "submitted")),
                                  time_text(field(r, "started")),
                                  time_text(field(r, "ended")),
                                  number_text(field(r, "wait"), 0),
                                  number_text(field(r, "run_time"), 0),
                                  number_text(field(r, "gpu_hours"), 4)};
    const json gs = r.value("gpu_seconds", json::object());
    for (const auto& t : types) f.push_back(cli::fixed(gs.value(t, 0.0) / 3600, 4));
    f.push_back(std::to_string(r.value("restarts", 0)));
    f.push_back(std::to_string(r.value("lost_steps", 0)));
    f.push_back(number_text(field(r, "rho"), 3));
    f.push_back(field(r, "exit_status").is_number() ? field(r, "exit_status").dump() : "");
    f.push_back(r.value("reason", ""));
    if (slurm) {
      std::string ids;
      for (const auto& g : r.value("slurm", json::array()))
        ids += (ids.empty() ? "" : " ") + std::to_string(g.value("slurm_job", 0L));
      f.push_back(ids);
    }
    std::string line;
    for (std::size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + csv_field(f[i]);
    out += line + "\n";
  }
  return out;
}

std::string history_table(const json& doc) {
  const json rows = doc.value("data", json::object()).value("jobs", json::array());
  const bool slurm = has_slurm(rows);
  std::vector<std::string> header = {"job",        "user",     "state",     "submitted",
                                     "wait",       "run time", "gpu hours", "restarts",
                                     "lost steps", "rho",      "reason"};
  if (slurm) header.push_back("slurm jobs");
  cli::Table t(header);
  for (const auto& r : rows) {
    std::string hours = cli::fixed(r.value("gpu_hours", 0.0), 2);
    std::string per;
    const json gs = r.value("gpu_seconds", json::object());
    for (const auto& [type, s] : gs.items()) {
      per += (per.empty() ? "" : " ") + type + ":" + cli::fixed(s.get<double>() / 3600, 2);
    }
    if (gs.size() > 1) hours += " (" + per + ")";
    std::string reason = r.value("reason", "");
    std::vector<std::string> row = {
        r.value("name", ""),
        r.value("user", ""),
        r.value("state", ""),
        time_text(field(r, "submitted")),
        field(r, "wait").is_number() ? cli::duration(field(r, "wait").get<double>()) : "-",
        cli::duration(r.value("run_time", 0.0)),
        hours,
        std::to_string(r.value("restarts", 0)),
        std::to_string(r.value("lost_steps", 0)),
        rho_text(r),
        reason.empty() ? "-" : reason};
    if (slurm) row.push_back(slurm_history_text(r.value("slurm", json::array())));
    t.add(row);
  }
  const json note = doc.value("data", json::object()).value("slurm_note", json());
  return t.render() + (note.is_string() ? "note: " + note.get<std::string>() + "\n" : "");
}

}  // namespace sia::ctl
