// The sia configuration file (sia-config(5)) and where each setting came from.
// Settings are read in layers, later layers winning key by key:
//   built-in defaults < /etc/sia/config.toml < $XDG_CONFIG_HOME/sia/config.toml
//   < --config FILE (else $SIA_CONFIG) < SIA_* environment < command-line flags.
// Every setting has one dotted key ("controller.round"), a type, a default, and usually
// an environment variable; `sia-ctl config` prints the effective value of each with its
// source. A file with an unknown section or key, a value of the wrong type or out of
// range, or an unparsable environment variable is a configuration error (status 78)
// naming the file (or variable) and the field; a bad flag value is a usage error (64).
// Relative paths in a file are taken relative to the file's directory.
// Thread-safety: plain values; load_config reads the environment through a callback.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "channel/timing.hpp"
#include "deadline/admission.hpp"
#include "model/shared_profiles.hpp"
#include "policy/policy.hpp"
#include "slurm/slurm_settings.hpp"

namespace sia::ctl {

// One effective setting: its key, value (a string, number or list of strings) and source
// ("default", a file path, "environment SIA_X", "flag --x").
struct Setting {
  std::string key;
  nlohmann::json value;
  std::string source;
};

struct ControllerSettings {
  std::string state_dir;  // default: $XDG_STATE_HOME/sia/ctl, else ~/.local/state/sia/ctl
  std::string cluster;    // "" until configured
  std::string catalog;    // "" = the bundled model catalog
  // Reservations for other work (round/reservations.hpp), read every round; "": none.
  std::string reservations;
  std::string bind = "tcp://127.0.0.1:7400";
  double round = 60;
  int retention = 200;
  // An ended job is forgotten (its record and its line in `sia-ctl history`) this many
  // days after it ended, at the snapshot after a round; its name stays taken. 0: never.
  double history_days = 90;
  std::string policy = "sia";
  PolicyOptions policy_options;  // p, lambda_n, lambda_a, the Sia+ knobs, the solver's limits
  // Sia+: what the in-process estimator's profile store does (model/shared_profiles.hpp).
  std::string profile_store = profile_store_name(kDefaultProfileStore);
  double stage_timeout = 120;  // seconds an external stage may run
  // Admission of guaranteed jobs (ctl/admission.hpp): the work is planned this fraction
  // over the goodput model's estimate.
  double deadline_margin = deadline::kDefaultDeadlineMargin;
  double heartbeat_interval = channel::kChannelTiming.heartbeat_interval;
  int heartbeat_liveness = channel::kChannelTiming.heartbeat_liveness;
  double fence_after = channel::kChannelTiming.fence_after;
  // A running job whose current workers have sent no report for silent_after seconds
  // (since their start, or their last report) is flagged "silent" in status and explain;
  // after hung_timeout seconds (0: never) it is stopped for a round and so restarted from
  // its checkpoint, at most hung_retries times in a row, then it fails with that reason.
  double silent_after = 120;
  double hung_timeout = 600;
  int hung_retries = 2;
  // A job on several nodes whose ranks all lost their peers (exit 69) while every node of
  // it was up -- the nodes could not reach each other -- is started again from its
  // checkpoint on the same placement (a new attempt), at most peer_retries times without
  // progress in between (once it trains past the step it had reached when its peers were
  // last lost, the count starts again), then it fails with that reason (sia-ctl(1),
  // FAILURE MODEL).
  int peer_retries = 3;
  std::string secret_key;
  std::string allow;
  // What one client may cost (sia-config(5), "Limits"): the largest request a client may
  // send (bytes of the message; refused with status 65 before it is read), and per job the
  // largest command line (its arguments' bytes summed) and JobSpec (as JSON).
  int max_request_bytes = 1 << 20;
  int max_command_bytes = 64 << 10;
  int max_job_bytes = 128 << 10;
  // Where jobs checkpoint: a job's SIA_CKPT_DIR is ROOT/JOB on whichever node runs it, so
  // it must be storage every node mounts at this path (default STATE_DIR/ckpt). Sent to
  // the nodes with each job; a node's own sia-run --ckpt-root overrides it.
  std::string checkpoint_root;
};

struct StageSettings {
  std::string estimate;  // "" = in-process
  std::string solve;
  std::string place;
};

// The commands run on (or for) each node; {state}, {node}, {cluster} and {jobs} are
// replaced when run. The defaults run sia-run on this machine, a state directory per node.
struct NodeCommandSettings {
  std::vector<std::string> apply = {"sia-run",   "--state-dir", "{state}/nodes/{node}",
                                    "apply",     "--node",      "{node}",
                                    "--cluster", "{cluster}",   "--jobs",
                                    "{jobs}",    "-o",          "json",
                                    "-"};
  std::vector<std::string> reports = {"sia-run", "--state-dir", "{state}/nodes/{node}",
                                      "reports", "-o",          "jsonl"};
  std::vector<std::string> status = {"sia-run", "--state-dir", "{state}/nodes/{node}",
                                     "status",  "-o",          "json"};
  // `sia-run logs`: JOB and its flags are appended.
  std::vector<std::string> logs = {"sia-run", "--state-dir", "{state}/nodes/{node}", "logs"};
  double timeout = 300;  // seconds one node command may run
};

struct AgentSettings {
  std::string connect = "tcp://127.0.0.1:7400";
  std::string node;       // "" = the host name
  std::string state_dir;  // "" = sia-run's default
  std::string server_key;
  std::string secret_key;
  // ipc://: the user (name or uid) the controller runs as, trusted besides root and the
  // agent's own user to own the socket's directories (channel/ipc_trust.hpp). "": none.
  std::string controller_user;
};

struct ClientSettings {
  std::string connect;  // "" = act on the local state directory
  std::string server_key;
  std::string secret_key;
};

struct Settings {
  ControllerSettings controller;
  StageSettings stages;
  NodeCommandSettings nodes;
  AgentSettings agent;
  ClientSettings client;
  slurm::SlurmSettings slurm;      // [slurm]: rounds realised through Slurm when enabled
  std::vector<Setting> settings;   // every key, in documentation order
  std::vector<std::string> files;  // the files read, lowest precedence first
};

// Values typed on a program's setting flags, by key ("controller.cluster" -> "c.toml").
using SettingFlags = std::map<std::string, std::string>;

struct ConfigSources {
  std::string config_file;  // --config; "" = $SIA_CONFIG, if set
  // Flag values by key, as typed: key -> {flag name for messages, value}.
  std::map<std::string, std::pair<std::string, std::string>> flags;
  // Adds each non-empty value of `values` to `flags` under its key's flag.
  void add_flags(const SettingFlags& values);
  std::function<const char*(const char*)> getenv;  // null: std::getenv
  std::string system_file = "/etc/sia/config.toml";
};

Settings load_config(const ConfigSources& sources);

// Splits a stage command ("sia-solve --policy themis") on spaces into argv.
std::vector<std::string> split_command(const std::string& command);

// The keys load_config knows, in documentation order, with their environment variables
// and the flag that sets each ("" when none; sia-ctl's, or for agent.* sia-run agent's):
// for `sia-ctl config`, the man page, the programs' flags and tests. A key's default is the
// member's initial value in Settings (controller.state_dir's and checkpoint_root's are
// derived: from $XDG_STATE_HOME or $HOME, and from the state directory).
struct SettingInfo {
  std::string key;
  std::string env;
  std::string flag;
  std::string description;
};
const std::vector<SettingInfo>& setting_infos();
// The row of `key`; an unknown key is a programming error (status 70).
const SettingInfo& setting_info(const std::string& key);
// A setting flag's help: `what`, then where the value comes from without the flag, and
// `otherwise` when given ("Cluster file (default: controller.cluster, $SIA_CLUSTER)").
std::string setting_flag_help(const std::string& key, const std::string& what,
                              const std::string& otherwise = "");

// The Config document's data and its table.
nlohmann::json config_to_json(const Settings& config);
std::string config_table(const Settings& config);

}  // namespace sia::ctl
