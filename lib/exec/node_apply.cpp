#include "exec/node_apply.hpp"

#include <unistd.h>

#include <climits>
#include <filesystem>

#include "core/error.hpp"
#include "core/log.hpp"
#include "os/checkpoint_dir.hpp"

namespace sia::exec {

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) {
    throw Error(ExitStatus::config, "cannot tell the host name; give --node");
  }
  return buf;
}

std::pair<int, int> parse_port_range(const std::string& text) {
  auto dash = text.find('-');
  try {
    if (dash != std::string::npos) {
      std::size_t used_lo = 0, used_hi = 0;
      int lo = std::stoi(text.substr(0, dash), &used_lo);
      int hi = std::stoi(text.substr(dash + 1), &used_hi);
      if (used_lo == dash && used_hi == text.size() - dash - 1 && lo >= 1 && lo <= hi &&
          hi <= 65535) {
        return {lo, hi};
      }
    }
  } catch (const std::exception&) {
  }
  throw Error(ExitStatus::usage,
              "--port-range: expected LO-HI with 1 <= LO <= HI <= 65535, got \"" + text + "\"");
}

NodeWork read_node_work(const ApplyArgs& a) {
  NodeWork w;
  w.settings = a.settings;
  auto [lo, hi] = parse_port_range(a.port_range);
  w.settings.port_lo = lo;
  w.settings.port_hi = hi;
  w.settings.port_free = tcp_port_free;
  w.settings.file_exists = [](const std::string& p) {
    std::error_code ec;
    // lstat: a link the job planted at `latest` tells nothing about where it points.
    return std::filesystem::exists(std::filesystem::symlink_status(p, ec));
  };
  w.settings.cwd = std::filesystem::current_path().string();
  w.node = a.node.empty() ? host_name() : a.node;

  Document pd = read_document(a.placement, {"Placement"});
  if (auto r = pd.metadata().get("round")) {  // sia-ctl's round: see reconcile()
    const std::int64_t round = r->positive_int();
    if (round > 1'000'000'000) r->expected("a round number up to 1000000000");
    w.round = static_cast<int>(round);
  }
  const bool have_cluster = !a.cluster.empty();
  Cluster cluster = have_cluster ? read_cluster(a.cluster) : cluster_from_placement(pd.data());
  if (have_cluster) {
    bool known = false;
    std::string names;
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
      known = known || cluster.nodes[i].name == w.node;
      if (i < 8) names += (i ? ", " : "") + cluster.nodes[i].name;
    }
    if (cluster.nodes.size() > 8) names += ", ...";
    if (!known) {
      throw Error(ExitStatus::config, "node \"" + w.node + "\" is not in cluster " + cluster.name +
                                          " (" + names + ")" +
                                          (a.node.empty() ? "; give --node" : ""));
    }
  }
  Placement p = parse_placement(pd.data(), cluster);
  std::vector<Document> docs;
  for (const auto& f : a.jobs) {
    auto d = read_documents(f, {"Jobs", "JobSpec"});
    docs.insert(docs.end(), d.begin(), d.end());
  }
  std::vector<JobState> jobs = jobs_from_documents(docs);
  w.wanted = plan_node(p, cluster, jobs, w.node, display_name(a.placement));
  // A cluster file without addresses names nodes that may not be host names at all: the
  // one-machine setup, every node's sia-run on this machine. Their jobs meet on loopback.
  for (auto& l : w.wanted) {
    if (l.nodes.size() > 1 && l.master_addr == l.nodes.front().node &&
        !host_resolves(l.master_addr)) {
      l.master_addr = "127.0.0.1";
    }
  }
  for (const auto& j : p.jobs) w.elsewhere.insert(j.job);
  for (const auto& l : w.wanted) w.elsewhere.erase(l.job);
  return w;
}

std::vector<PlannedAction> plan_node_actions(const NodeWork& work, const StateDir& state,
                                             Mode mode) {
  std::vector<JobRecord> records = state.exists() ? state.records() : std::vector<JobRecord>{};
  return reconcile(work.wanted, records, work.elsewhere, mode, work.round);
}

std::vector<PlannedAction> apply_node(const NodeWork& work, StateDir& state, Executor& executor,
                                      Mode mode, bool detached) {
  state.bind_node(work.node);
  executor.wait_stopping();
  std::vector<PlannedAction> actions = plan_node_actions(work, state, mode);

  std::vector<std::pair<std::string, std::string>> stops;
  for (const auto& a : actions) {
    if (a.action == Action::stop) stops.emplace_back(a.job, "sia-run apply: " + a.reason);
    if (a.action == Action::restart)
      stops.emplace_back(a.job, "sia-run apply: restart: " + a.reason);
  }
  executor.stop(stops, work.settings.grace);

  std::string first_error;
  ExitStatus first_status = ExitStatus::ok;
  auto note_failure = [&](const Error& e) {  // act on the others; report the first at the end
    if (first_error.empty()) {
      first_error = e.what();
      first_status = e.status();
    }
  };
  for (auto& a : actions) {
    const bool starts = a.action == Action::start || a.action == Action::restart;
    if (!starts && a.action != Action::resize) continue;
    for (const auto& want : work.wanted) {
      if (want.job != a.job) continue;
      try {
        if (a.action == Action::resize) {
          executor.resize(state.record(a.job), want);
          continue;
        }
        JobLaunch l = want;
        prepare_generation(l, a.generation, state, work.settings);
        if (auto done = os::checkpoint_finished(l.ckpt_dir)) {
          // It finished on a node sharing the checkpoint directory: never again.
          a.action = Action::leave;
          a.generation = static_cast<int>(*done);
          a.reason = "finished (round " + std::to_string(*done) + ", says " + l.ckpt_dir +
                     "/finished): not started again";
          continue;
        }
        // From now on a writer of an older generation cannot move the job's `latest`.
        os::raise_checkpoint_generation(l.ckpt_dir, l.generation);
        if (l.restore_missing) {
          a.warning = "no checkpoint in " + l.ckpt_dir + " (the job was at step " +
                      std::to_string(l.expected_step) + "): it starts from step 0";
          log::info("job " + l.job + ": " + a.warning);
        }
        executor.start(l, detached);
      } catch (const Error& e) {
        note_failure(e);
      }
    }
  }
  if (!first_error.empty()) throw Error(first_status, first_error);
  return actions;
}

}  // namespace sia::exec
