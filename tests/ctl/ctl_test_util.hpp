// Helpers for the lib/ctl tests: a hermetic configuration on a temporary state directory,
// a small cluster, job specs, a scripted NodeDriver that plays sia-run on every node, and
// a fixture that runs rounds with them.
#pragma once

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "core/document.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/node_driver.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/state_store.hpp"
#include "exec/temp_dir.hpp"

namespace sia::ctl::test {

using exec::test::slurp;
using exec::test::TempDir;

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// `nodes` nodes (t4-0, t4-1, ...) of two "t4" GPUs.
inline std::string write_cluster(const TempDir& dir, int nodes = 2) {
  std::string path = dir / "cluster.toml";
  write_text(path,
             "name = \"box\"\n[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 2\n"
             "count = " +
                 std::to_string(nodes) + "\n");
  return path;
}

// Settings from nothing but `flags` (no environment, no files).
inline Settings test_config(const std::string& state_dir, const std::string& cluster,
                            std::map<std::string, std::string> extra = {}) {
  ConfigSources s;
  s.getenv = [](const char*) -> const char* { return nullptr; };
  s.system_file = "";
  s.flags["controller.state_dir"] = {"--state-dir", state_dir};
  if (!cluster.empty()) s.flags["controller.cluster"] = {"--cluster", cluster};
  s.flags["controller.time_limit"] = {"--time-limit", "1"};
  for (const auto& [k, v] : extra) s.flags[k] = {"--" + k, v};
  return load_config(s);
}

inline JobSpec spec(const std::string& name, int max_gpus = 2) {
  nlohmann::json j = {
      {"name", name}, {"model", "cifar10"}, {"max_gpus", max_gpus}, {"command", {"/bin/true"}}};
  return parse_job_spec(Node(j, "test", name));
}

// A round record that places job `name` on `nodes` ({node, GPUs} in rank order).
inline nlohmann::json placing_round(
    std::int64_t round, double time, const std::string& name,
    const std::vector<std::pair<std::string, std::vector<int>>>& nodes) {
  nlohmann::json list = nlohmann::json::array();
  int gpus = 0;
  for (const auto& [node, g] : nodes) {
    list.push_back({{"name", node}, {"gpus", g}});
    gpus += static_cast<int>(g.size());
  }
  nlohmann::json entry = {{"name", name},    {"gpu_type", "t4"},
                          {"nodes", list},   {"batch_size", 16 * gpus},
                          {"local_bsz", 16}, {"accum_steps", 0}};
  return {{"type", "round"},
          {"round", round},
          {"time", time},
          {"cluster", nullptr},
          {"allocation", nullptr},
          {"placement", {{"jobs", nlohmann::json::array({entry})}}},
          {"models", nlohmann::json::object()}};
}

// Plays sia-run on each node: remembers what each node runs (job -> generation, state)
// and answers apply with start / restart / keep / stop actions.
class FakeDriver : public NodeDriver {
 public:
  explicit FakeDriver(Cluster cluster) : cluster_(std::move(cluster)) {
    for (const auto& n : cluster_.nodes) up.insert(n.name);
  }

  std::set<std::string> up;
  std::set<std::string> refuse;  // up, but every delivery fails (its sia-run apply refuses)
  std::set<std::string> silent;  // up (not fenced) but its agent is silent: no word, no delivery
  std::vector<ReportLine> pending_reports;
  std::vector<std::pair<std::int64_t, Placement>> deliveries;
  // node -> job -> {state, generation, placement part}
  struct Run {
    std::string state = "running";
    int generation = 0;
    std::string part;
    std::optional<int> exit_status;  // a failed run's (finished: 0)
  };
  std::map<std::string, std::map<std::string, Run>> runs;

  std::vector<std::string> nodes_up() override { return {up.begin(), up.end()}; }

  std::vector<NodeStatus> observe() override {
    std::vector<NodeStatus> out;
    for (const auto& n : cluster_.nodes) {
      NodeStatus s;
      s.node = n.name;
      s.ok = up.count(n.name) > 0 && !silent.count(n.name);
      if (!s.ok) {
        s.error = "unreachable";
      } else {
        nlohmann::json jobs = nlohmann::json::array();
        for (const auto& [job, r] : runs[n.name]) {
          jobs.push_back({{"name", job},
                          {"state", r.state},
                          {"round", r.generation},
                          {"exit_status", r.state == "finished" ? nlohmann::json(0)
                                          : r.exit_status       ? nlohmann::json(*r.exit_status)
                                                                : nlohmann::json(nullptr)},
                          {"reason", r.state}});
        }
        s.status = {{"node", n.name}, {"jobs", jobs}};
      }
      out.push_back(s);
    }
    return out;
  }

  std::vector<ReportLine> drain_reports() override { return std::exchange(pending_reports, {}); }
  void forget(const std::vector<std::string>& jobs) override {
    forgotten.insert(forgotten.end(), jobs.begin(), jobs.end());
  }
  std::vector<std::string> forgotten;  // what forget() was told, in order

  std::vector<NodeResult> deliver(std::int64_t round, const Placement& placement,
                                  const nlohmann::json& jobs_doc) override {
    deliveries.push_back({round, placement});
    std::map<std::string, int> attempt;  // the Jobs document's state.attempt: part of the part
    const nlohmann::json none = nlohmann::json::array();
    const nlohmann::json& data = jobs_doc.contains("data") ? jobs_doc.at("data") : none;
    for (const auto& j : data.is_object() && data.contains("jobs") ? data.at("jobs") : none) {
      if (j.contains("state")) attempt[j.at("name")] = j.at("state").value("attempt", 0);
    }
    std::vector<NodeResult> out;
    for (const auto& n : cluster_.nodes) {
      NodeResult r;
      r.node = n.name;
      if (!up.count(n.name) || refuse.count(n.name) || silent.count(n.name)) {
        r.error = up.count(n.name) ? "sia-run: error: the placement is refused" : "down";
        out.push_back(r);
        continue;
      }
      r.acknowledged = true;
      nlohmann::json actions = nlohmann::json::array();
      std::set<std::string> here;
      for (const auto& j : placement.jobs) {
        for (const auto& ng : j.nodes) {
          if (ng.node != n.name) continue;
          here.insert(j.job);
          std::string part = cluster_.types[j.type].name;
          for (int g : ng.gpus) part += "," + std::to_string(g);
          part += "/" + std::to_string(j.batch.local);
          for (const auto& other : j.nodes) part += " " + other.node;  // its rendezvous
          part += " #" + std::to_string(attempt[j.job]);
          Run& run = runs[n.name][j.job];
          std::string action;
          if (run.generation == 0) {
            action = "start";
            run.generation = 1;
          } else if (run.state == "finished" || run.state == "failed") {
            action = run.part == part ? "leave" : "start";
            if (action == "start") ++run.generation;
          } else if (run.part != part || run.state != "running") {
            action = run.state == "running" ? "restart" : "start";
            ++run.generation;
          } else {
            action = "keep";
          }
          if (action != "leave" && action != "keep") run.state = "running";
          run.part = part;
          actions.push_back({{"job", j.job}, {"action", action}, {"round", run.generation}});
        }
      }
      for (auto& [job, run] : runs[n.name]) {
        if (!here.count(job) && run.state == "running") {
          run.state = "preempted";
          actions.push_back({{"job", job}, {"action", "stop"}, {"round", run.generation}});
        }
      }
      r.plan = {{"node", n.name}, {"actions", actions}};
      out.push_back(r);
    }
    return out;
  }

  // A report line of `job` from `node` at `offset` (as rank 0 would write it).
  void report(const std::string& node, const std::string& job, std::int64_t offset,
              nlohmann::json fields) {
    fields["type"] = "report";
    fields["job"] = job;
    if (!fields.contains("round")) fields["round"] = runs[node][job].generation;
    pending_reports.push_back({node, job, offset, fields.dump(), 0});
  }

  const Cluster& cluster() const { return cluster_; }

 private:
  Cluster cluster_;
};

// A state directory, the two-node cluster, a FakeDriver and a clock: rounds as
// `sia-ctl round` runs them, one minute apart.
struct RoundFixture {
  TempDir dir;
  std::string cluster_file;
  std::string state = dir / "state";
  ctl::Settings config;
  Cluster cluster = read_cluster(cluster_file);
  StateStore store{state};
  FakeDriver driver{cluster};
  double now = 1000;
  std::vector<std::string> warnings;

  explicit RoundFixture(std::map<std::string, std::string> extra = {}, int nodes = 2)
      : cluster_file(write_cluster(dir, nodes)),
        config(test_config(dir / "state", dir / "cluster.toml", std::move(extra))) {
    store.create();
  }

  nlohmann::json round() {
    auto lock = store.lock("test round");
    JobBook book = store.load(true, &warnings);
    RoundOptions o;
    o.now = [this] { return now; };
    o.warn = [this](const std::string& w) { warnings.push_back(w); };
    RoundEngine engine(config, cluster, store, driver, o);
    nlohmann::json r = engine.run(book);
    now += 60;
    return r;
  }
  JobBook book() const { return store.load(false, nullptr); }
  std::set<std::string> placed_in(std::size_t delivery) const {
    std::set<std::string> out;
    for (const auto& j : driver.deliveries.at(delivery).second.jobs) out.insert(j.job);
    return out;
  }
  std::string node_of(const std::string& job) const {
    JobBook b = book();  // a temporary would leave the pointer dangling
    const BookJob* j = b.find(job);
    return j && j->placed ? j->placed->nodes.front().node : "";
  }
};

}  // namespace sia::ctl::test
