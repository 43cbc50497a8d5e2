// Controller round latency under load: the daemon's round (lib/ctl RoundEngine through
// lib/serve HubDriver on a real lib/channel Hub) with 1,000 submitted jobs and 64
// simulated agents -- one thread holding 64 DEALER sockets that say READY, heartbeat, and
// ACK every ASSIGN at once (no sia-run behind them). Prints the round latency (median,
// p95, max) and its parts: the stages and the state (estimate -> solve -> place, journal,
// snapshot) against delivery (ASSIGN to 64 nodes until the last ACK).
//   build/bin/bench_ctl_round_latency [--jobs N] [--agents N] [--rounds N] [--policy NAME]
//                                     [--time-limit SECONDS]
// Defaults: 1000 jobs, 64 agents (32 x 4 T4, 16 x 8 A100, 16 x 8 RTX 2080 Ti nodes), 10
// rounds, policy sia, solver time limit 2 s; SIA_BENCH_SMOKE=1 (bench/smoke.hpp): 40 jobs,
// 4 agents, 2 rounds. The state and the hub's ipc socket live in a private (0700)
// temporary directory, removed at the end.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "channel/hub.hpp"
#include "channel/protocol.hpp"
#include "core/cluster.hpp"
#include "ctl/config.hpp"
#include "ctl/job_book.hpp"
#include "ctl/round_engine.hpp"
#include "ctl/state_store.hpp"
#include "os/atomic_file.hpp"
#include "serve/hub_driver.hpp"
#include "smoke.hpp"
#include "synthetic.hpp"

using namespace sia;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct SimAgent {
  std::string node;
  channel::Inventory inventory;
  zmq::socket_t socket;
};

// One thread, 64 DEALERs: READY once, HEARTBEAT every 0.5 s, an ACK for every ASSIGN.
void run_agents(const std::string& endpoint, const Cluster& cluster, int count,
                const std::atomic<bool>& stop, std::atomic<long>& acks) {
  zmq::context_t ctx;
  std::vector<SimAgent> agents;
  for (int i = 0; i < count && i < static_cast<int>(cluster.nodes.size()); ++i) {
    const ClusterNode& n = cluster.nodes[static_cast<std::size_t>(i)];
    SimAgent a{n.name,
               {cluster.types[n.type].name, n.gpus, n.address},
               zmq::socket_t(ctx, zmq::socket_type::dealer)};
    a.socket.set(zmq::sockopt::linger, 0);
    a.socket.connect(endpoint);
    channel::Ready r;
    r.node = a.node;
    r.inventory = a.inventory;
    r.run_status = {{"node", a.node}, {"jobs", json::array()}};
    a.socket.send(zmq::buffer(channel::encode(r)), zmq::send_flags::none);
    agents.push_back(std::move(a));
  }
  std::vector<zmq::pollitem_t> items;
  for (auto& a : agents) items.push_back({a.socket.handle(), 0, ZMQ_POLLIN, 0});
  auto next_beat = std::chrono::steady_clock::now();
  while (!stop.load()) {
    zmq::poll(items.data(), items.size(), std::chrono::milliseconds(50));
    for (std::size_t i = 0; i < agents.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      zmq::message_t m;
      while (agents[i].socket.recv(m, zmq::recv_flags::dontwait)) {
        channel::Message msg;
        try {
          msg = channel::decode(std::string_view(static_cast<const char*>(m.data()), m.size()));
        } catch (const Error&) {
          continue;
        }
        auto* as = std::get_if<channel::Assign>(&msg);
        if (!as) continue;
        json actions = json::array();
        json jobs = json::array();
        for (const auto& j : as->placement["data"].value("jobs", json::array())) {
          const auto& nodes = j.value("nodes", json::array());
          if (!nodes.empty() && nodes[0].value("name", "") == agents[i].node) {
            actions.push_back(
                {{"job", j.value("name", "")}, {"action", "keep"}, {"round", as->round}});
            jobs.push_back(
                {{"name", j.value("name", "")}, {"state", "running"}, {"round", as->round}});
          }
        }
        channel::Ack ack;
        ack.round = as->round;
        ack.seq = as->seq;
        ack.plan = {{"actions", actions}};
        ack.run_status = {{"node", agents[i].node}, {"jobs", jobs}};
        agents[i].socket.send(zmq::buffer(channel::encode(ack)), zmq::send_flags::dontwait);
        ++acks;
      }
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= next_beat) {
      for (auto& a : agents) {
        channel::Heartbeat h;
        h.node = a.node;
        a.socket.send(zmq::buffer(channel::encode(h)), zmq::send_flags::dontwait);
      }
      next_beat = now + std::chrono::milliseconds(500);
    }
  }
}

double pct(std::vector<double> v, double q) {
  return bench::percentile(std::move(v), q);
}

// A positive number from a flag's value, or nullopt.
std::optional<double> positive(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || v > 1e9) return std::nullopt;
  return v;
}

constexpr const char* kUsage =
    "usage: bench_ctl_round_latency [--jobs N] [--agents N] [--rounds N] [--policy NAME] "
    "[--time-limit SECONDS]\n";

}  // namespace

int main(int argc, char** argv) {
  const bool small = bench::smoke();
  int njobs = small ? 40 : 1000, nagents = small ? 4 : 64, rounds = small ? 2 : 10;
  std::string policy = "sia";
  double time_limit = 2;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_ctl_round_latency: %s needs a value\n%s", a.c_str(), kUsage);
      return 64;
    }
    const char* value = argv[i + 1];
    if (a == "--policy") {
      policy = value;
      continue;
    }
    const std::optional<double> v = positive(value);
    const bool whole = v && *v == static_cast<int>(*v);
    if (a == "--time-limit" && v) {
      time_limit = *v;
    } else if (a == "--jobs" && whole) {
      njobs = static_cast<int>(*v);
    } else if (a == "--agents" && whole) {
      nagents = static_cast<int>(*v);
    } else if (a == "--rounds" && whole) {
      rounds = static_cast<int>(*v);
    } else if (a == "--time-limit" || a == "--jobs" || a == "--agents" || a == "--rounds") {
      std::fprintf(stderr, "bench_ctl_round_latency: %s %s: expected a positive %s\n", a.c_str(),
                   value, a == "--time-limit" ? "number of seconds" : "whole number");
      return 64;
    } else {
      std::fprintf(stderr, "bench_ctl_round_latency: unknown option %s\n%s", a.c_str(), kUsage);
      return 64;
    }
  }
  if (nagents < 3) {
    std::fprintf(stderr,
                 "bench_ctl_round_latency: --agents %d: expected at least 3 (a node of each GPU "
                 "type)\n",
                 nagents);
    return 64;
  }
  // The hub refuses to bind an ipc socket in a directory others can read (lib/channel
  // make_ipc_private): the bench's own directory is made private from the start.
  std::string tmpl = (fs::temp_directory_path() / "sia-bench-ctl-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "bench_ctl_round_latency: %s: cannot create: %s\n", tmpl.c_str(),
                 std::strerror(errno));
    return 73;
  }
  const fs::path tmp = tmpl;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{tmp};
  try {
    // N nodes in three GPU types (the hetero cluster's types; 64 by default).
    const int t4 = nagents / 2, a100 = nagents / 4, rtx = nagents - t4 - a100;
    std::string cluster_text =
        "name = \"bench-" + std::to_string(nagents) +
        "\"\n"
        "[[gpu_types]]\nname = \"t4\"\n[[gpu_types]]\nname = \"a100\"\n"
        "[[gpu_types]]\nname = \"rtx2080ti\"\n"
        "[[node_groups]]\ngpu_type = \"t4\"\ngpus_per_node = 4\ncount = " +
        std::to_string(t4) + "\n[[node_groups]]\ngpu_type = \"a100\"\ngpus_per_node = 8\ncount = " +
        std::to_string(a100) +
        "\n[[node_groups]]\ngpu_type = \"rtx2080ti\"\ngpus_per_node = 8\ncount = " +
        std::to_string(rtx) + "\n";
    os::write_file_atomic((tmp / "cluster.toml").string(), cluster_text);
    os::write_file_atomic((tmp / "config.toml").string(),
                          "[controller]\nstate_dir = \"state\"\ncluster = \"cluster.toml\"\n"
                          "retention = 5\npolicy = \"" +
                              policy + "\"\ntime_limit = " + std::to_string(time_limit) +
                              "\nheartbeat_interval = 1\n"
                              "heartbeat_liveness = 100\nfence_after = 600\n");
    ctl::ConfigSources src;
    src.config_file = (tmp / "config.toml").string();
    src.system_file = "";
    src.getenv = [](const char*) -> const char* { return nullptr; };
    ctl::Settings config = ctl::load_config(src);
    Cluster cluster = read_cluster(config.controller.cluster);
    ctl::StateStore store(config.controller.state_dir);
    store.create();
    exec::StateLock lock = store.lock("bench");
    ctl::JobBook book = store.load(true, nullptr);

    // 1,000 jobs with the shipped workloads' model mix, submitted in one record.
    std::mt19937 rng(7);
    const std::pair<const char*, double> mix[] = {{"cifar10", 0.80},
                                                  {"deepspeech2", 0.07},
                                                  {"bert", 0.06},
                                                  {"yolov3", 0.04},
                                                  {"imagenet", 0.03}};
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<JobSpec> specs;
    for (int i = 0; i < njobs; ++i) {
      double x = u(rng), acc = 0;
      std::string model = mix[0].first;
      for (const auto& [m, p] : mix) {
        acc += p;
        if (x <= acc) {
          model = m;
          break;
        }
      }
      json j = {{"name", "job-" + std::to_string(i)},
                {"model", model},
                {"command", json::array({"true"})}};
      specs.push_back(parse_job_spec(Node(j, "bench", "jobs")));
    }
    const double t_submit = bench::now_seconds();
    store.commit(book, {ctl::make_submit("bench", "bench", ctl::wall_clock(), specs)});
    std::printf("submitted %d jobs in %.0f ms (one journal record)\n", njobs,
                1e3 * (bench::now_seconds() - t_submit));

    channel::HubOptions ho;
    ho.bind = "ipc://" + (tmp / "hub.sock").string();
    ho.heartbeat_interval = 1;
    ho.heartbeat_liveness = 100;
    ho.fence_after = 600;
    ho.log = [](const std::string&) {};
    channel::Hub hub(ho, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<long> acks{0};
    std::thread agents(run_agents, hub.endpoint(), std::cref(cluster), nagents, std::cref(stop),
                       std::ref(acks));
    // The agents' thread ends before the hub goes, on every way out of this block.
    struct Joiner {
      std::atomic<bool>& stop;
      std::thread& thread;
      ~Joiner() {
        stop = true;
        if (thread.joinable()) thread.join();
      }
    } joiner{stop, agents};
    serve::HubDriverOptions dopt;
    dopt.ack_timeout = 60;
    serve::HubDriver driver(hub, cluster, dopt);
    const double t_connect = bench::now_seconds();
    while (static_cast<int>(hub.nodes_up().size()) < nagents) {
      driver.pump(std::chrono::milliseconds(50));
      if (bench::now_seconds() - t_connect > 30) {
        std::fprintf(stderr, "only %zu of %d agents connected\n", hub.nodes_up().size(), nagents);
        return 69;
      }
    }
    std::printf("%d agents connected in %.0f ms\n", nagents,
                1e3 * (bench::now_seconds() - t_connect));

    ctl::RoundOptions ro;
    ro.warn = [](const std::string&) {};
    ctl::RoundEngine engine(config, cluster, store, driver, ro);
    std::vector<double> total, deliver, rest;
    std::printf("%5s %8s %8s %10s %10s %10s\n", "round", "placed", "waiting", "total ms",
                "stages ms", "deliver ms");
    for (int r = 0; r < rounds; ++r) {
      const double t0 = bench::now_seconds();
      json res = engine.run(book);
      const double t = bench::now_seconds() - t0;
      const double d = driver.last_deliver_seconds();
      total.push_back(1e3 * t);
      deliver.push_back(1e3 * d);
      rest.push_back(1e3 * (t - d));
      int placed = 0, waiting = 0;
      for (const ctl::BookJob* b : book.active()) (b->placed ? placed : waiting)++;
      std::printf("%5lld %8d %8d %10.0f %10.0f %10.1f\n",
                  static_cast<long long>(res.value("round", std::int64_t{0})), placed, waiting,
                  1e3 * t, 1e3 * (t - d), 1e3 * d);
      driver.pump(std::chrono::milliseconds(100));  // the loop between rounds
    }
    stop = true;
    agents.join();
    std::printf("\n%d jobs, %d agents, %d rounds, policy %s (time limit %.1f s), %ld ACKs\n", njobs,
                nagents, rounds, policy.c_str(), time_limit, acks.load());
    std::printf("%-26s %10s %10s %10s\n", "", "median ms", "p95 ms", "max ms");
    auto row = [](const char* what, const std::vector<double>& v) {
      std::printf("%-26s %10.1f %10.1f %10.1f\n", what, bench::median(v), pct(v, 95),
                  *std::max_element(v.begin(), v.end()));
    };
    row("round", total);
    row("  stages + state", rest);
    const std::string delivery = "  delivery (" + std::to_string(nagents) + " ASSIGN/ACK)";
    row(delivery.c_str(), deliver);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_ctl_round_latency: %s\n", e.what());
    return to_int(e.status());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ctl_round_latency: %s\n", e.what());
    return 70;
  }
  return 0;
}
