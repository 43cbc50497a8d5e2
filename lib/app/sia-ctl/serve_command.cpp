#include "app/sia-ctl/serve_command.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "channel/allow_list.hpp"
#include "channel/hub.hpp"
#include "channel/keys.hpp"
#include "channel/lease_memory.hpp"
#include "channel/security.hpp"
#include "cli/stop_signals.hpp"
#include "cli/tool.hpp"
#include "core/cluster.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/round_outage.hpp"
#include "ctl/slurm_driver.hpp"
#include "ctl/state_store.hpp"
#include "os/clock.hpp"
#include "serve/client_service.hpp"
#include "serve/hub_driver.hpp"
#include "serve/log_requests.hpp"
#include "serve/report_journal.hpp"
#include "slurm/beside_runner.hpp"

namespace sia::serve {

using nlohmann::json;

namespace {

void log(const std::string& line) {
  sia::log::info(line);
}
void warn(const std::string& line) {
  sia::log::info("warning: " + line);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// The "delivered" record of an ACK, as the round engine writes it.
json delivered_record(std::int64_t round, const std::string& node, const channel::Ack& ack) {
  return ctl::make_delivered(round, node, ack.ok, ack.error, ack.plan);
}

// The nodes the last placement used: after a restart the first round waits for them.
std::set<std::string> placed_nodes(const ctl::JobBook& book) {
  std::set<std::string> out;
  const json& p = book.last_placement();
  if (!p.is_object()) return out;
  for (const auto& j : p.value("jobs", json::array())) {
    if (!j.is_object()) continue;
    for (const auto& n : j.value("nodes", json::array())) {
      if (n.is_object() && n.contains("name") && n["name"].is_string()) out.insert(n["name"]);
    }
  }
  return out;
}

// Per node, the live jobs the journal has placed there at some time (now or earlier).
std::map<std::string, std::set<std::string>> given_jobs(const ctl::JobBook& book) {
  std::map<std::string, std::set<std::string>> out;
  auto add = [&](const std::optional<ctl::Placed>& p, const std::string& job) {
    if (!p) return;
    for (const auto& ng : p->nodes) out[ng.node].insert(job);
  };
  for (const ctl::BookJob* b : book.active()) {
    add(b->placed, b->spec.name);
    for (const auto& h : b->history) add(h.placed, b->spec.name);
  }
  return out;
}

// The hub's settings from [controller]; the keys are read here, before the lock, so that a
// bad key file is reported whatever else runs.
channel::HubOptions hub_options(const ctl::ControllerSettings& cc) {
  channel::HubOptions ho;
  ho.bind = cc.bind;
  if (!cc.secret_key.empty()) ho.server_key = channel::load_secret_key(cc.secret_key);
  if (!cc.allow.empty()) ho.allow = channel::AllowList::read(cc.allow);
  ho.heartbeat_interval = cc.heartbeat_interval;
  ho.heartbeat_liveness = cc.heartbeat_liveness;
  ho.fence_after = cc.fence_after;
  ho.max_request_bytes = static_cast<std::size_t>(cc.max_request_bytes);
  ho.confirm_on_poll = true;  // every line handed out is journaled before the next poll
  // ASSIGN sequence numbers keep growing across restarts.
  ho.first_seq = static_cast<std::int64_t>(ctl::wall_clock() * 1000);
  return ho;
}

// Without [controller] secret_key, a tcp:// bind is CURVE with the pair made once in
// STATE/keys; the local admin client key is on the allow-list either way (when made).
void use_local_keys(channel::HubOptions& ho, const ctl::ControllerSettings& cc) {
  if (ho.server_key || channel::is_local_endpoint(ho.bind)) return;
  channel::LocalKeys keys = channel::make_local_keys(cc.state_dir);
  ho.server_key = keys.server;
  if (!ho.allow) ho.allow = channel::AllowList{};
  if (!ho.allow->find(keys.admin.public_key)) {
    channel::Identity admin{channel::Identity::Kind::client, "admin", "", true};
    admin.admin = true;
    ho.allow->add(keys.admin.public_key, admin);
  }
  log("CURVE keys in " + keys.dir + ": agents pin " +
      channel::local_key_file(cc.state_dir, "server", "pub") +
      "; clients with this state directory use admin.key");
}

// The agents as the hub knows them now, for NODES (ctl::node_list's `live`).
json live_agents(const channel::Hub& hub) {
  const double now = ctl::wall_clock();
  json list = json::array();
  for (const auto& a : hub.agents()) {
    list.push_back(
        {{"name", a.node},
         {"state", a.up && !a.fenced ? "up" : "down"},
         {"gpu_type", a.inventory.gpu_type.empty() ? json(nullptr) : json(a.inventory.gpu_type)},
         {"gpus", a.inventory.gpus},
         {"address", a.inventory.address.empty() ? json(nullptr) : json(a.inventory.address)},
         {"last_seen", now - a.silent_for},
         {"lease",
          {{"fence_after", a.lease.fence_after},
           {"grace", a.lease.grace},
           {"silence_limit", a.fence_limit}}}});
  }
  return list;
}

void log_event(const channel::HubEvent& e) {
  switch (e.type) {
    case channel::HubEventType::ready:
    case channel::HubEventType::down:
    case channel::HubEventType::fenced:
    case channel::HubEventType::bye:
    case channel::HubEventType::up:
      log(e.detail);
      break;
    default:
      break;  // refusals are logged by the hub
  }
}

// Runs the stages on a thread of their own while this one keeps the channel alive
// (heartbeats, reports, clients): a long solve does not make the agents think the
// controller is gone.
std::function<void(const std::function<void()>&)> stages_beside(HubDriver& driver) {
  return [&driver](const std::function<void()>& work) {
    std::atomic<bool> done{false};
    std::exception_ptr error;
    std::thread t([&] {
      try {
        work();
      } catch (...) {
        error = std::current_exception();
      }
      done = true;
    });
    try {
      while (!done.load()) driver.pump(std::chrono::milliseconds(20));
    } catch (...) {
      t.join();
      throw;
    }
    t.join();
    if (error) std::rethrow_exception(error);
  };
}

// The daemon's parts, for its loop.
struct Serving {
  const ctl::ControllerSettings& cc;
  ctl::JobBook& book;
  ctl::StateStore& store;
  channel::Hub& hub;
  HubDriver& driver;
  ClientService& service;
  ctl::RoundEngine& engine;
  long& reports;  // journaled since the last round's log line
  const ctl::ForeignReports& foreign;
  // [slurm] enabled: the nodes are Slurm's (no agent to wait for); the round's warnings
  // are held (`held`) and said after it, a slurmctld outage as one line, then the
  // driver's own (`driver_warnings`).
  bool slurm = false;
  std::size_t cluster_nodes = 0;
  std::vector<std::string>* held = nullptr;
  std::function<std::vector<std::string>()> driver_warnings;
};

// After a round through Slurm: its held warnings, an outage said once, the driver's.
void say_slurm_round(Serving& s, const json& result, std::size_t cluster_nodes) {
  const ctl::RoundOutage outage =
      ctl::round_outage(result.value("nodes", json::array()), cluster_nodes);
  for (const auto& w : std::exchange(*s.held, {})) {
    if (!ctl::said_by(outage, w)) warn(w);
  }
  for (const auto& w : s.driver_warnings()) warn(w);
  if (outage.outage) {
    warn("round " + std::to_string(result.value("round", std::int64_t{0})) + ": " +
         ctl::outage_line(outage) + "; the next round tries again");
  }
}

// Runs one round and logs it; a round that fails is a warning unless the state cannot be
// written (then the daemon stops).
void run_round(Serving& s) {
  const auto t0 = os::system_clock().now();
  try {
    json r = s.engine.run(s.book);
    if (s.slurm) say_slurm_round(s, r, s.cluster_nodes);
    const double took = std::chrono::duration<double>(os::system_clock().now() - t0).count();
    int running = 0, queued = 0;
    for (const ctl::BookJob* b : s.book.active()) (b->placed ? running : queued)++;
    log("round " + std::to_string(r.value("round", std::int64_t{0})) + ": " +
        std::to_string(running) + " placed, " + std::to_string(queued) + " waiting, " +
        std::to_string(r.value("ended", json::array()).size()) + " ended, " +
        std::to_string(s.reports + r.value("reports", 0)) + " reports" +
        (s.foreign.refused() > 0
             ? ", " + std::to_string(s.foreign.refused()) + " refused since the start"
             : "") +
        " (" + fmt(took) + " s, delivery " + fmt(s.driver.last_deliver_seconds()) + " s)");
    s.reports = 0;
  } catch (const Error& e) {
    if (s.slurm) {
      for (const auto& w : std::exchange(*s.held, {})) warn(w);
      for (const auto& w : s.driver_warnings()) warn(w);
    }
    if (e.status() == ExitStatus::io || e.status() == ExitStatus::cant_create) throw;
    warn(std::string("round ") + std::to_string(s.book.round() + 1) + " failed: " + e.what());
  }
}

// Rounds every controller.round seconds -- sooner after a submission into an idle cluster,
// or (after a restart) once the last placement's nodes are back -- until a stop signal.
void serve_rounds(Serving& s, const std::function<bool()>& stopping) {
  const auto start = os::system_clock().now();
  auto next_round = start + os::span(s.cc.round);
  std::set<std::string> awaited = placed_nodes(s.book);  // the first round waits for these
  bool first = true;
  bool said_no_nodes = false;
  auto next_inbox_check = start;
  while (!stopping()) {
    auto now = os::system_clock().now();
    auto wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(next_round - now),
                           std::chrono::milliseconds(0), std::chrono::milliseconds(250));
    s.driver.pump(wait);
    if (stopping()) break;
    now = os::system_clock().now();
    if (s.service.take_round_wanted()) next_round = std::min(next_round, now);
    if (first && !awaited.empty() && !s.slurm) {
      auto up = s.driver.nodes_up();
      bool all = std::all_of(awaited.begin(), awaited.end(), [&](const std::string& n) {
        auto a = s.hub.agent(n);
        return a && a->up && a->connected;
      });
      if (all && !up.empty()) next_round = std::min(next_round, now);
    }
    if (now >= next_inbox_check) {  // local submissions into a cluster where nothing runs
      next_inbox_check = now + std::chrono::seconds(1);
      bool idle = true;
      for (const ctl::BookJob* b : s.book.active()) idle = idle && !b->placed;
      if (idle && !s.store.inbox_files().empty()) next_round = std::min(next_round, now);
    }
    if (now < next_round) continue;
    // With no node up a round could only take back what is placed: once that is done,
    // rounds wait for an agent.
    const auto active = s.book.active();
    const bool any_placed = std::any_of(
        active.begin(), active.end(), [](const ctl::BookJob* b) { return b->placed.has_value(); });
    if (!s.slurm && s.driver.nodes_up().empty() && !any_placed) {
      if (!said_no_nodes) log("no agent is connected: the round waits for one");
      said_no_nodes = true;
      next_round = now + std::min(os::span(s.cc.round), os::span(1.0));
      continue;
    }
    said_no_nodes = false;
    first = false;
    const auto t0 = os::system_clock().now();
    run_round(s);
    next_round = t0 + os::span(s.cc.round);
  }
}

}  // namespace

int run_serve_command(const ctl::CtlArgs& args) {
  ctl::Settings config = ctl::load_config(args.sources);
  const auto& cc = config.controller;
  if (cc.state_dir.empty()) {
    throw Error(ExitStatus::config,
                "no state directory: give --state-dir, or set controller.state_dir, "
                "SIA_CTL_STATE_DIR or HOME");
  }
  if (cc.cluster.empty()) {
    throw Error(ExitStatus::config,
                "no cluster: give --cluster, or set controller.cluster or SIA_CLUSTER");
  }
  Cluster cluster = read_cluster(cc.cluster);
  channel::HubOptions ho = hub_options(cc);
  for (const auto& n : cluster.nodes) ho.nodes.insert(n.name);
  ho.cluster_name = cluster.name;

  ctl::StateStore store(cc.state_dir);
  store.create();
  exec::StateLock lock = store.lock("sia-ctl serve");
  use_local_keys(ho, cc);
  // Each node's lease as its agent said it last, before this start (sia-ctl(1), FAILURE
  // MODEL): a silent node of the last placement is held for it.
  channel::LeaseMemory leases(store.path(ctl::kLeasesFile), warn);
  ho.remembered = leases.leases();
  std::vector<std::string> warnings;
  ctl::JobBook book = store.load(true, &warnings);
  for (const auto& w : warnings) warn(w);

  ClientService service(config, store, book);
  channel::Hub hub(ho, [&service](const channel::Identity& who, const channel::Request& r) {
    return service.handle(who, r);
  });
  service.set_live_nodes([&hub] { return live_agents(hub); });
  hub.set_log_planner([&book, &store](const channel::Identity& who, const channel::Request& r) {
    return plan_log_request(book, store, who, r);
  });
  // What the journal holds of each node's reports: not taken again.
  std::map<std::string, channel::Offsets> stored;
  for (const auto& [key, next] : book.report_offsets()) stored[key.first][key.second] = next;
  for (const auto& [node, offsets] : stored) hub.confirm_reports(node, offsets);

  cli::install_counting_stop_handlers();

  HubDriverOptions dopt;
  // After a restart the nodes of the last placement hold their jobs until they would have
  // been fenced had this controller seen them go silent.
  dopt.hold = restart_hold(placed_nodes(book), ho);
  dopt.given = given_jobs(book);
  dopt.leases = &leases;
  dopt.log = log;
  dopt.ack_timeout = std::min(config.nodes.timeout, std::max(10.0, 2 * cc.round));
  dopt.interrupted = [] { return cli::stop_signals().load() > 1; };
  long reports = 0;  // journaled since the last round's log line
  ctl::ForeignReports foreign(warn);
  dopt.on_reports = [&](std::vector<ctl::ReportLine> lines) {
    reports += journal_reports(store, book, lines, ctl::wall_clock(), warn, foreign);
  };
  dopt.on_late_ack = [&](const std::string& node, const channel::Ack& ack) {
    if (ack.round != book.round()) return;  // a round that is over; the next one counts
    store.commit(book, {delivered_record(ack.round, node, ack)});
    if (!ack.ok) warn("node " + node + ": round " + std::to_string(ack.round) + ": " + ack.error);
  };
  dopt.on_event = log_event;
  HubDriver driver(hub, cluster, dopt);
  ctl::RoundOptions ro;
  std::vector<std::string> held;  // a round through Slurm's warnings, said after it
  ro.warn = config.slurm.enabled ? std::function<void(const std::string&)>(
                                       [&held](const std::string& w) { held.push_back(w); })
                                 : std::function<void(const std::string&)>(warn);
  ro.run_stages = stages_beside(driver);
  // [slurm] enabled: rounds go through Slurm (sbatch, scancel) as cron rounds do, with no
  // agent to wait for; the hub still serves the clients, also while a Slurm command or a
  // checkpoint-stop takes its time (the commands run beside, the waits pump the hub).
  std::optional<ctl::SlurmDriver> slurm;
  if (config.slurm.enabled) {
    ctl::SlurmDriverOptions so;
    so.state_dir = store.root();
    so.checkpoint_root = cc.checkpoint_root;
    so.sleep = [&driver](double seconds) {
      const auto until = os::system_clock().now() + os::span(seconds);
      for (auto now = os::system_clock().now(); now < until; now = os::system_clock().now()) {
        driver.pump(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(until - now),
                             std::chrono::milliseconds(50)));
      }
    };
    auto runner = std::make_unique<slurm::BesideRunner>(
        std::make_unique<slurm::ProcessRunner>(config.slurm),
        [&driver] { driver.pump(std::chrono::milliseconds(20)); });
    slurm.emplace(cluster, config.slurm, so, std::move(runner),
                  [&book] { return book.report_offsets(); });
  }
  ctl::RoundEngine engine(config, cluster, store,
                          slurm ? static_cast<ctl::NodeDriver&>(*slurm) : driver, ro);

  log("serving " + hub.endpoint() +
      (ho.server_key
           ? " (CURVE, allow-list " + (cc.allow.empty() ? "admin key only" : cc.allow) + ")"
           : " (no CURVE: ipc:// in a private directory)") +
      ": cluster " + cluster.name + ", state " + store.root() + ", a round every " + fmt(cc.round) +
      " s; " + std::to_string(book.active().size()) + " active jobs");
  Serving serving{cc,
                  book,
                  store,
                  hub,
                  driver,
                  service,
                  engine,
                  reports,
                  foreign,
                  !!slurm,
                  cluster.nodes.size(),
                  &held,
                  [&slurm] { return slurm ? slurm->take_warnings() : std::vector<std::string>{}; }};
  serve_rounds(serving, [] { return cli::stop_signals().load() > 0; });

  log("stopping: compacting the state and saying BYE to the agents");
  store.compact(book);
  hub.say_bye("the controller is stopping");
  driver.pump(std::chrono::milliseconds(200));  // lets the BYEs go out
  return 0;
}

}  // namespace sia::serve
