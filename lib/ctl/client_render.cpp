#include "ctl/client_render.hpp"

#include <algorithm>
#include <vector>

#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/run_as.hpp"
#include "ctl/app_explanation.hpp"
#include "ctl/client_docs.hpp"
#include "ctl/history.hpp"
#include "exec/job_launch.hpp"

namespace sia::ctl {

using nlohmann::json;

namespace {

std::string text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  if (v.is_number_float()) return cli::fixed(v.get<double>(), 1);
  return v.dump();
}

std::string ago(const json& t, double now) {
  if (!t.is_number()) return "-";
  return cli::duration(std::max(0.0, now - t.get<double>())) + " ago";
}

// "fairness: jobs worst rho 1.31, 1 of 5 unfair (rho > 1); apps ..." (nothing when no row
// has a rho).
std::string fairness_line(const json& d) {
  std::string out;
  const json f = d.value("fairness", json::object());
  for (const char* kind : {"jobs", "apps"}) {
    const json s = f.value(kind, json::object());
    if (!s.value("worst_rho", json()).is_number()) continue;
    out += std::string(out.empty() ? "" : "; ") + kind + " worst rho " +
           cli::fixed(s["worst_rho"].get<double>(), 2) + ", " +
           std::to_string(s.value("unfair", 0)) + " of " + std::to_string(s.value("count", 0)) +
           " unfair";
  }
  return out.empty() ? "" : "fairness: " + out + " (rho > 1)\n";
}

// The USER column's cell: the account a job switches to on its nodes, "-" when it runs as
// the nodes' own user (run_as then says so in words, never an account name) or has no
// run_as.
std::string run_as_user(const json& run_as) {
  if (!run_as.is_string() || !valid_account_name(run_as.get<std::string>())) return "-";
  return run_as.get<std::string>();
}

std::string jobs_table(const json& d) {
  const json jobs = d.value("jobs", json::array());
  // The USER column only when some job runs as an account of its own (an allow-list's
  // user): a column of "-" alone would say nothing.
  const bool users = std::any_of(jobs.begin(), jobs.end(), [](const json& j) {
    return run_as_user(j.value("run_as", json())) != "-";
  });
  std::vector<std::string> header = {"job",  "state",    "gpus", "placement", "restarts",
                                     "step", "progress", "rho",  "age",       "reason"};
  if (users) header.insert(header.begin() + 1, "user");
  // The HPARAMS column only when some job is a trial with values (an app's).
  const bool trials = std::any_of(jobs.begin(), jobs.end(), [](const json& j) {
    return !hparams_text(j.value("hparams", json::object())).empty();
  });
  if (trials) header.insert(header.begin() + 1, "hparams");
  cli::Table t(std::move(header));
  for (const auto& j : jobs) {
    std::string where;
    for (const auto& n : j.value("nodes", json::array())) {
      where += (where.empty() ? "" : " ") + n.value("name", std::string("?")) + ":" +
               exec::join_ints(n.value("gpus", std::vector<int>{}));
    }
    if (!where.empty()) where = j.value("gpu_type", std::string("")) + " " + where;
    std::string reason = j.value("reason", "");
    if (const std::string code = j.value("reason_code", ""); !code.empty()) {
      reason = code + ": " + reason;
    }
    if (j.contains("exit_status") && j["exit_status"].is_number_integer() &&
        j["exit_status"].get<int>() != 0) {
      reason += " (exit " + std::to_string(j["exit_status"].get<int>()) + ")";
    }
    std::vector<std::string> row = {j.value("name", ""),
                                    j.value("state", ""),
                                    std::to_string(j.value("gpus", 0)),
                                    where.empty() ? "-" : where,
                                    std::to_string(j.value("restarts", 0)),
                                    std::to_string(j.value("step", std::int64_t{0})),
                                    cli::fixed(j.value("progress", 0.0), 1),
                                    rho_text(j),
                                    cli::duration(j.value("age", 0.0)),
                                    reason.empty() ? "-" : reason};
    // The job's one user name (client_docs.hpp: job_user); a controller from before it
    // sent only run_as.
    if (users) {
      row.insert(row.begin() + 1,
                 j.value("user", json()).is_string() && !j["user"].get<std::string>().empty()
                     ? j["user"].get<std::string>()
                     : run_as_user(j.value("run_as", json())));
    }
    if (trials) {
      const std::string values = hparams_text(j.value("hparams", json::object()));
      row.insert(row.begin() + 1, values.empty() ? "-" : values);
    }
    t.add(std::move(row));
  }
  const json apps = d.value("apps", json::array());
  if (apps.empty()) return t.render() + fairness_line(d);
  cli::Table a(
      {"app", "state", "scheduler", "phase", "live", "stopped", "finished", "best", "rho"});
  for (const auto& x : apps) {
    std::string best = "-";
    if (x.contains("best") && x["best"].is_number()) {
      best = x.value("metric", std::string("?")) + " " + cli::fixed(x["best"].get<double>(), 4) +
             " (" + x.value("best_trial", std::string("?")) + ")";
    }
    // Hyperband: each bracket's phase of its phases ("2/3 1/2 1/1").
    std::string phase =
        std::to_string(x.value("phase", 1)) + " of " + std::to_string(x.value("phases", 1));
    const json brackets = x.value("brackets", json::array());
    if (!brackets.empty()) phase.clear();
    for (const auto& b : brackets) {
      phase += (phase.empty() ? "" : " ") + std::to_string(b.value("phase", 1)) + "/" +
               std::to_string(b.value("phases", 1));
    }
    a.add({x.value("name", ""), x.value("state", ""), x.value("scheduler", ""), phase,
           std::to_string(x.value("live", 0)), std::to_string(x.value("stopped", 0)),
           std::to_string(x.value("finished", 0)), best, rho_text(x)});
  }
  return t.render() + "\n" + a.render() + fairness_line(d);
}

std::string nodes_table(const json& d, double now) {
  cli::Table t({"node", "type", "gpus", "state", "last seen", "jobs", "error"});
  for (const auto& n : d.value("nodes", json::array())) {
    std::string jobs;
    for (const auto& j : n.value("jobs", json::array())) {
      jobs += (jobs.empty() ? "" : " ") + j.get<std::string>();
    }
    std::string err = n.value("error", "");
    std::string derr = n.value("delivery_error", "");
    if (!derr.empty()) err += (err.empty() ? "" : "; ") + std::string("delivery: ") + derr;
    t.add({n.value("name", ""), text(n.value("gpu_type", json())), text(n.value("gpus", json())),
           n.value("state", "") + (n.value("reserved", false) ? ", reserved" : ""),
           ago(n.value("last_seen", json()), now), jobs.empty() ? "-" : jobs,
           err.empty() ? "-" : err});
  }
  return t.render();
}

// Slurm's nodes as sia sees them (slurm/slurm_node_view.hpp).
std::string slurm_nodes_table(const json& d) {
  cli::Table t({"node", "state", "type", "gpus", "sia", "others", "offered", "why not"});
  for (const auto& n : d.value("nodes", json::array())) {
    const std::string why = n.value("why", "");
    t.add({n.value("name", ""), n.value("state", ""), text(n.value("gpu_type", json())),
           text(n.value("gpus", json())), text(n.value("gpus_sia", json())),
           text(n.value("gpus_other", json())), n.value("offered", false) ? "yes" : "no",
           why.empty() ? "-" : why});
  }
  return t.render();
}

// A failed job's log tail: a heading, then its lines indented under a bar.
std::string log_tail_text(const json& t) {
  if (!t.is_object()) return "";
  std::string out = "  the last lines of rank " + std::to_string(t.value("rank", 0)) +
                    "'s log on " + t.value("node", std::string("?")) + ":\n";
  const std::string text = t.value("text", std::string());
  if (text.empty()) return out + "    (empty)\n";
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out += "    | " + text.substr(pos, nl - pos) + "\n";
    pos = nl + 1;
  }
  return out;
}

std::string explain_text(const json& d) {
  std::string out = "job " + d.value("job", std::string("?")) + ": " +
                    d.value("state", std::string("?")) + " (after round " +
                    std::to_string(d.value("round", 0)) + ")\n";
  for (const auto& l : d.value("lines", json::array())) out += "  " + l.get<std::string>() + "\n";
  return out + log_tail_text(d.value("log_tail", json()));
}

std::string round_text(const json& d) {
  int up = 0, total = 0;
  for (const auto& n : d.value("nodes", json::array())) {
    ++total;
    up += n.value("up", false) ? 1 : 0;
  }
  int running = 0, waiting = 0;
  for (const auto& j : d.value("jobs", json::array())) {
    (j.value("state", "") == "running" ? running : waiting)++;
  }
  std::string out = std::string(d.value("dry_run", false) ? "dry run: " : "") + "round " +
                    std::to_string(d.value("round", 0)) + " on " +
                    d.value("cluster", std::string("?")) + ": " + std::to_string(up) + "/" +
                    std::to_string(total) + " nodes up, " + std::to_string(running) + " running, " +
                    std::to_string(waiting) + " waiting, " + std::to_string(d.value("reports", 0)) +
                    " new reports\n";
  cli::Table t({"job", "state", "placement", "restarts", "progress", "actions"});
  for (const auto& j : d.value("jobs", json::array())) {
    std::string actions;
    for (const auto& a : j.value("actions", json::array())) {
      actions += (actions.empty() ? "" : "; ") + a.get<std::string>();
    }
    t.add({j.value("name", ""), j.value("state", ""), j.value("placement", ""),
           std::to_string(j.value("restarts", 0)), cli::fixed(j.value("progress", 0.0), 1),
           actions.empty() ? "-" : actions});
  }
  if (t.rows() > 0) out += t.render();
  for (const auto& s : d.value("submitted", json::array())) {
    out += "submitted: " + s.get<std::string>() + "\n";
  }
  for (const char* what : {"cancelled", "held", "released", "requeued", "at_rung"}) {
    for (const auto& s : d.value(what, json::array())) {
      out += std::string(what) + ": " + s.get<std::string>() + "\n";
    }
  }
  for (const auto& e : d.value("ended", json::array())) {
    out += e.value("state", std::string("ended")) + ": " + e.value("job", std::string("?")) + " (" +
           e.value("reason", std::string("")) + ")\n";
  }
  for (const auto& r : d.value("rejected", json::array())) {
    out += "rejected: " + r.value("file", std::string("?")) + ": " +
           r.value("reason", std::string("")) + "\n";
  }
  return out;
}

}  // namespace

std::string rho_text(const json& row) {
  const json rho = row.value("rho", json());
  if (!rho.is_number()) return "-";
  // "~": an estimate from the throughput model alone, before the job measured its own.
  return (row.value("rho_basis", json()) == "model" ? "~" : "") + cli::fixed(rho.get<double>(), 2);
}

std::string render_table(const json& doc, double now) {
  const std::string kind = doc.value("kind", "");
  const json data = doc.value("data", json::object());
  if (kind == "JobStatusList") return jobs_table(data);
  if (kind == "NodeList") return nodes_table(data, now);
  if (kind == "SlurmNodeList") return slurm_nodes_table(data);
  if (kind == "JobExplanation") return explain_text(data);
  if (kind == "AppExplanation") return app_explanation_text(data);
  if (kind == "RoundResult") return round_text(data);
  if (kind == "JobHistory") return history_table(doc);
  return dump_json(doc, true) + "\n";
}

}  // namespace sia::ctl
