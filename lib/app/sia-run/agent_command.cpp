#include "app/sia-run/agent_command.hpp"

#include <atomic>
#include <cstdio>

#include "channel/agent.hpp"
#include "channel/sia_run_node.hpp"
#include "cli/stop_signals.hpp"
#include "cli/tool.hpp"
#include "core/cluster.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "exec/node_apply.hpp"
#include "exec/state_dir.hpp"
#include "os/account.hpp"

namespace sia::channel {

namespace {

Inventory inventory_of(const Cluster& cluster, const std::string& node, const std::string& file) {
  for (const auto& n : cluster.nodes) {
    if (n.name == node) return {cluster.types[n.type].name, n.gpus, n.address};
  }
  std::string names;
  for (std::size_t i = 0; i < cluster.nodes.size() && i < 8; ++i) {
    names += (i ? ", " : "") + cluster.nodes[i].name;
  }
  if (cluster.nodes.size() > 8) names += ", ...";
  throw Error(ExitStatus::config, file + ": node \"" + node + "\" is not in cluster " +
                                      cluster.name + " (" + names + "); give --node");
}

// --controller-user: a uid, or a user name the password database knows (78 otherwise).
std::optional<uid_t> controller_uid(const std::string& user) {
  if (user.empty()) return std::nullopt;
  if (user.find_first_not_of("0123456789") == std::string::npos && user.size() <= 9) {
    return static_cast<uid_t>(std::stoul(user));
  }
  if (auto account = os::find_account(user)) return account->uid;
  throw Error(ExitStatus::config,
              "--controller-user: no user \"" + user + "\" on this machine (give a name or a uid)");
}

}  // namespace

int run_agent(const AgentArgs& args) {
  if (args.connect.empty()) {
    throw Error(ExitStatus::usage, "agent: --connect ENDPOINT is required");
  }
  AgentOptions o;
  o.connect = args.connect;
  o.node = args.node.empty() ? exec::host_name() : args.node;
  o.heartbeat_interval = args.heartbeat_interval;
  o.heartbeat_liveness = args.heartbeat_liveness;
  o.fence_after = args.fence_after;
  o.stop_grace = args.grace;
  o.keys = load_client_keys(args.server_key, args.secret_key);
  o.controller_uid = controller_uid(args.controller_user);
  require_curve(o.connect, o.keys.has_value(), "connect",
                "an agent pins the controller's public key: give --server-key FILE -- "
                "`sia-ctl serve` writes it to STATE_DIR/keys/server.pub -- and --secret-key "
                "with this node's key (sia-ctl keygen), listed as [[agent]] node = \"" +
                    o.node + "\" in the controller's allow-list");
  if (!args.cluster.empty()) {
    o.inventory = inventory_of(read_cluster(args.cluster), o.node, args.cluster);
  } else {
    o.inventory.address = o.node;
  }
  std::string state_dir = args.state_dir.empty() ? exec::default_state_dir() : args.state_dir;
  exec::StateDir state(state_dir);
  if (state.exists()) {
    std::string bound = state.bound_node();
    if (!bound.empty() && bound != o.node) {
      throw Error(ExitStatus::config, "state directory " + state_dir + " serves node \"" + bound +
                                          "\", not \"" + o.node + "\"");
    }
  }
  SiaRunNodeOptions so;
  so.state_dir = state_dir;
  so.node = o.node;
  so.cluster = args.cluster;
  auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  so.apply_args.insert(so.apply_args.end(), {"--grace", number(args.grace)});
  if (!args.ckpt_root.empty()) {
    so.apply_args.insert(so.apply_args.end(), {"--ckpt-root", args.ckpt_root});
  }
  if (args.report_interval > 0) {
    so.apply_args.insert(so.apply_args.end(), {"--report-interval", number(args.report_interval)});
  }
  so.log = [](const std::string& line) { log::info("agent: " + line); };
  o.log = [](const std::string& line) { log::info("agent: " + line); };
  SiaRunNode backend(so);
  Agent agent(o, backend);  // checks the endpoint before anything is started
  cli::install_counting_stop_handlers();
  log::debug("agent: node " + o.node + ", state directory " + state_dir + ", controller " +
             o.connect + (o.keys ? " (CURVE)" : " (no CURVE)"));
  return agent.run(cli::stop_signals(), args.keep_jobs);
}

}  // namespace sia::channel
