#include "ctl/config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <type_traits>
#include <variant>

#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/error_list.hpp"
#include "core/toml_json.hpp"
#include "policy/knobs.hpp"

namespace sia::ctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Where a setting's value lives in Settings; its type is the setting's type.
using StringMap = std::map<std::string, std::string>;
using Field = std::variant<std::string*, double*, int*, unsigned*, bool*, std::vector<std::string>*,
                           StringMap*>;

// One row per key, in documentation order (sia-config(5) follows it): where the value
// lives, whether it is a path (relative ones are taken from the file's directory), its
// environment variable and flag ("" when none), and what it is. The policy knobs' rows are
// made from their table (policy/knobs.hpp): `knob` names the row, `field` is null.
struct Def {
  std::string key;
  Field (*field)(Settings&);
  bool path;
  std::string env;
  std::string flag;
  std::string description;
  const Knob* knob = nullptr;
};

#define SIA_FIELD(member) [](Settings& s) -> Field { return &s.member; }

// The rows before the policy knobs' and after them.
const Def kBeforeKnobs[] = {
    {"controller.state_dir", SIA_FIELD(controller.state_dir), true, "SIA_CTL_STATE_DIR",
     "--state-dir", "controller state directory"},
    {"controller.cluster", SIA_FIELD(controller.cluster), true, "SIA_CLUSTER", "--cluster",
     "cluster.toml the controller schedules"},
    {"controller.catalog", SIA_FIELD(controller.catalog), true, "SIA_CATALOG", "",
     "model catalog directory"},
    {"controller.reservations", SIA_FIELD(controller.reservations), true, "SIA_CTL_RESERVATIONS",
     "", "reservations for other work, read every round (\"\": none)"},
    {"controller.bind", SIA_FIELD(controller.bind), false, "SIA_CTL_BIND", "--bind",
     "endpoint serve binds"},
    {"controller.round", SIA_FIELD(controller.round), false, "SIA_CTL_ROUND", "--round",
     "seconds between serve's rounds"},
    {"controller.retention", SIA_FIELD(controller.retention), false, "SIA_CTL_RETENTION", "",
     "rounds kept in STATE/rounds"},
    {"controller.history_days", SIA_FIELD(controller.history_days), false, "SIA_CTL_HISTORY_DAYS",
     "", "days an ended job stays in the book and in history (0: forever)"},
    {"controller.policy", SIA_FIELD(controller.policy), false, "SIA_CTL_POLICY", "--policy",
     "scheduling policy"},
};

const Def kAfterKnobs[] = {
    {"controller.profile_store", SIA_FIELD(controller.profile_store), false,
     "SIA_CTL_PROFILE_STORE", "", "Sia+: the profile store (off, fit or scale-up)"},
    {"controller.stage_timeout", SIA_FIELD(controller.stage_timeout), false,
     "SIA_CTL_STAGE_TIMEOUT", "", "seconds an external stage may run"},
    {"controller.deadline_margin", SIA_FIELD(controller.deadline_margin), false,
     "SIA_CTL_DEADLINE_MARGIN", "",
     "fraction a guaranteed job's work is planned over at admission"},
    {"controller.heartbeat_interval", SIA_FIELD(controller.heartbeat_interval), false,
     "SIA_CTL_HEARTBEAT_INTERVAL", "", "seconds between heartbeats"},
    {"controller.heartbeat_liveness", SIA_FIELD(controller.heartbeat_liveness), false,
     "SIA_CTL_HEARTBEAT_LIVENESS", "", "missed heartbeats before a peer is down"},
    {"controller.fence_after", SIA_FIELD(controller.fence_after), false, "SIA_CTL_FENCE_AFTER", "",
     "seconds without the controller before an agent stops its jobs"},
    {"controller.secret_key", SIA_FIELD(controller.secret_key), true, "SIA_CTL_SECRET_KEY", "",
     "controller's secret key file"},
    {"controller.allow", SIA_FIELD(controller.allow), true, "SIA_CTL_ALLOW", "",
     "allow-list of agent and client keys"},
    {"controller.max_request_bytes", SIA_FIELD(controller.max_request_bytes), false,
     "SIA_CTL_MAX_REQUEST_BYTES", "", "largest client request, bytes"},
    {"controller.max_command_bytes", SIA_FIELD(controller.max_command_bytes), false,
     "SIA_CTL_MAX_COMMAND_BYTES", "", "largest job command line, bytes (arguments summed)"},
    {"controller.max_job_bytes", SIA_FIELD(controller.max_job_bytes), false,
     "SIA_CTL_MAX_JOB_BYTES", "", "largest job spec, bytes (as JSON)"},
    {"controller.checkpoint_root", SIA_FIELD(controller.checkpoint_root), true,
     "SIA_CHECKPOINT_ROOT", "", "where jobs checkpoint (ROOT/JOB), the same path on every node"},
    {"controller.silent_after", SIA_FIELD(controller.silent_after), false, "SIA_CTL_SILENT_AFTER",
     "", "seconds without a report before a running job is flagged silent"},
    {"controller.hung_timeout", SIA_FIELD(controller.hung_timeout), false, "SIA_CTL_HUNG_TIMEOUT",
     "", "seconds without a report before a running job is restarted (0: never)"},
    {"controller.hung_retries", SIA_FIELD(controller.hung_retries), false, "SIA_CTL_HUNG_RETRIES",
     "", "restarts of a silent job before it fails"},
    {"controller.peer_retries", SIA_FIELD(controller.peer_retries), false, "SIA_CTL_PEER_RETRIES",
     "",
     "restarts of a multi-node job whose ranks lost their peers, without progress between "
     "them, before it fails"},
    {"stages.estimate", SIA_FIELD(stages.estimate), false, "SIA_STAGE_ESTIMATE", "--stage",
     "estimate stage program"},
    {"stages.solve", SIA_FIELD(stages.solve), false, "SIA_STAGE_SOLVE", "--stage",
     "solve stage program"},
    {"stages.place", SIA_FIELD(stages.place), false, "SIA_STAGE_PLACE", "--stage",
     "place stage program"},
    {"nodes.apply", SIA_FIELD(nodes.apply), false, "", "", "command giving a node its placement"},
    {"nodes.reports", SIA_FIELD(nodes.reports), false, "", "", "command reading a node's reports"},
    {"nodes.status", SIA_FIELD(nodes.status), false, "", "", "command reading what a node runs"},
    {"nodes.logs", SIA_FIELD(nodes.logs), false, "", "", "command reading a rank's log on a node"},
    {"nodes.timeout", SIA_FIELD(nodes.timeout), false, "SIA_NODES_TIMEOUT", "",
     "seconds one node command may run"},
    {"agent.connect", SIA_FIELD(agent.connect), false, "SIA_AGENT_CONNECT", "--connect",
     "controller endpoint"},
    {"agent.node", SIA_FIELD(agent.node), false, "SIA_AGENT_NODE", "--node", "this node's name"},
    {"agent.state_dir", SIA_FIELD(agent.state_dir), true, "SIA_STATE_DIR", "--state-dir",
     "sia-run state directory"},
    {"agent.server_key", SIA_FIELD(agent.server_key), true, "SIA_AGENT_SERVER_KEY", "--server-key",
     "controller's public key file"},
    {"agent.secret_key", SIA_FIELD(agent.secret_key), true, "SIA_AGENT_SECRET_KEY", "--secret-key",
     "node's secret key file"},
    {"agent.controller_user", SIA_FIELD(agent.controller_user), false, "SIA_AGENT_CONTROLLER_USER",
     "--controller-user", "user the controller runs as (trusted for an ipc:// socket)"},
    {"client.connect", SIA_FIELD(client.connect), false, "SIA_CLIENT_CONNECT", "--connect",
     "controller endpoint"},
    {"client.server_key", SIA_FIELD(client.server_key), true, "SIA_CLIENT_SERVER_KEY",
     "--server-key", "controller's public key file"},
    {"client.secret_key", SIA_FIELD(client.secret_key), true, "SIA_CLIENT_SECRET_KEY",
     "--secret-key", "client's secret key file"},
    {"slurm.enabled", SIA_FIELD(slurm.enabled), false, "SIA_SLURM", "",
     "realise rounds through Slurm (sbatch, scancel) instead of [nodes] or agents"},
    {"slurm.conf", SIA_FIELD(slurm.slurm_conf), true, "SIA_SLURM_CONF", "",
     "SLURM_CONF for every Slurm command (empty: Slurm's default)"},
    {"slurm.bin_dir", SIA_FIELD(slurm.bin_dir), true, "SIA_SLURM_BIN_DIR", "",
     "directory of scontrol, sbatch, squeue, scancel (empty: PATH)"},
    {"slurm.partition", SIA_FIELD(slurm.partition), false, "SIA_SLURM_PARTITION", "",
     "the partition sia uses (empty: every partition)"},
    {"slurm.account", SIA_FIELD(slurm.account), false, "SIA_SLURM_ACCOUNT", "",
     "--account of the jobs sia submits (empty: none)"},
    {"slurm.gres_types", SIA_FIELD(slurm.gres_types), false, "SIA_SLURM_GRES_TYPES", "",
     "Slurm GPU type -> catalog GPU type (a table; environment: a=b,c=d)"},
    {"slurm.shared_dir", SIA_FIELD(slurm.shared_dir), true, "SIA_SLURM_SHARED_DIR", "",
     "storage every node mounts: reports and batch plans (default STATE_DIR/slurm)"},
    {"slurm.grace_seconds", SIA_FIELD(slurm.grace_seconds), false, "SIA_SLURM_GRACE", "",
     "seconds from SIGTERM to SIGKILL when a job is checkpoint-stopped"},
    {"slurm.report_interval", SIA_FIELD(slurm.report_interval), false, "SIA_SLURM_REPORT_INTERVAL",
     "", "seconds between the workers' reports (SIA_REPORT_INTERVAL)"},
};

#undef SIA_FIELD

const std::vector<Def>& defs() {
  static const std::vector<Def> rows = [] {
    std::vector<Def> v(std::begin(kBeforeKnobs), std::end(kBeforeKnobs));
    for (const Knob& k : knob_table()) {
      v.push_back({std::string("controller.") + k.key, nullptr, false, k.env, "", k.what, &k});
    }
    v.insert(v.end(), std::begin(kAfterKnobs), std::end(kAfterKnobs));
    return v;
  }();
  return rows;
}

// Where the row's value lives in `s`.
Field field_of(const Def& d, Settings& s) {
  if (!d.knob) return d.field(s);
  return std::visit([&](auto m) -> Field { return &(s.controller.policy_options.*m); },
                    d.knob->field);
}

const Def* find_def(const std::string& key) {
  for (const auto& d : defs()) {
    if (key == d.key) return &d;
  }
  return nullptr;
}

std::string env_or(const ConfigSources& s, const char* name) {
  const char* v = s.getenv ? s.getenv(name) : std::getenv(name);
  return v ? v : "";
}

// Built-in settings, made once: the defaults, and the fields whose types the visits below
// dispatch on (read, never written).
Settings& built_in() {
  static Settings s;
  return s;
}

// The type of a setting, as messages name it.
std::string kind_text(const Def& d) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) return "a string";
        if constexpr (std::is_same_v<T, double>) return "a number";
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) return "an integer";
        if constexpr (std::is_same_v<T, bool>) return "true or false";
        if constexpr (std::is_same_v<T, StringMap>) return "a table of strings";
        return "a list of strings";
      },
      field_of(d, built_in()));
}

// A setting's value as JSON, read from its field.
json field_value(const Def& d, Settings& s) {
  return std::visit([](auto* p) { return json(*p); }, field_of(d, s));
}

// The built-in layer: each field's initial value, and the state directory's default.
json default_value(const Def& d, const ConfigSources& s) {
  if (d.key == "controller.state_dir") {
    if (auto x = env_or(s, "XDG_STATE_HOME"); !x.empty()) return x + "/sia/ctl";
    if (auto h = env_or(s, "HOME"); !h.empty()) return h + "/.local/state/sia/ctl";
    return "";
  }
  return field_value(d, built_in());
}

// Stores a checked value into its field; `where` names the setting and its source.
void store(const Def& d, const json& v, Settings& s, const std::string& where) {
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int>) {
          double x = v.get<double>();
          if (x < -1e9 || x > 1e9) {
            throw Error(ExitStatus::config, where + ": expected an integer of a sensible size");
          }
          *p = static_cast<int>(x);
        } else if constexpr (std::is_same_v<T, unsigned>) {
          double x = v.get<double>();
          if (!(x >= 0 && x <= 4294967295.0)) {
            throw Error(ExitStatus::config, where + ": expected an integer from 0 to 4294967295");
          }
          *p = static_cast<unsigned>(x);
        } else {
          *p = v.get<T>();
        }
      },
      field_of(d, s));
}

// Checks a value read from a file (already JSON) against the key's type.
json from_file(const Def& d, const Node& n, const std::string& file) {
  return std::visit(
      [&](auto* p) -> json {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          std::string v = n.as_string();
          if (d.path && !v.empty() && v[0] != '/') {
            // "c.toml": relative to the working directory
            fs::path base = fs::absolute(file).parent_path();
            v = (base / v).lexically_normal().string();
          }
          return v;
        } else if constexpr (std::is_same_v<T, double>) {
          return n.as_number();
        } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) {
          return n.as_int();
        } else if constexpr (std::is_same_v<T, bool>) {
          return n.as_bool();
        } else if constexpr (std::is_same_v<T, StringMap>) {
          if (!n.is_object()) n.expected("a table of strings (name = \"value\")");
          json out = json::object();
          for (const auto& k : n.keys()) out[k] = n.at(k).as_string();
          return out;
        } else {
          auto v = n.as_strings();
          if (v.empty()) n.expected("a non-empty list of strings (program and arguments)");
          return v;
        }
      },
      field_of(d, built_in()));
}

// Converts a value typed on the command line or in the environment.
json from_text(const Def& d, const std::string& text, const std::string& where, ExitStatus status) {
  auto bad = [&]() -> json {
    throw Error(status, where + ": expected " + kind_text(d) + ", got \"" + text + "\"");
  };
  return std::visit(
      [&](auto* p) -> json {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (!d.path || text.empty()) return text;
          return fs::absolute(text).lexically_normal().string();
        } else if constexpr (std::is_same_v<T, double>) {
          char* end = nullptr;
          double v = std::strtod(text.c_str(), &end);
          if (text.empty() || *end != '\0' || !std::isfinite(v)) return bad();
          return v;
        } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, unsigned>) {
          char* end = nullptr;
          long long v = std::strtoll(text.c_str(), &end, 10);
          if (text.empty() || *end != '\0') return bad();
          return v;
        } else if constexpr (std::is_same_v<T, bool>) {
          if (text == "true" || text == "1") return true;
          if (text == "false" || text == "0") return false;
          return bad();
        } else if constexpr (std::is_same_v<T, StringMap>) {
          json out = json::object();  // "a=b,c=d"
          std::string pair;
          for (std::size_t i = 0; i <= text.size(); ++i) {
            if (i < text.size() && text[i] != ',') {
              pair += text[i];
              continue;
            }
            auto eq = pair.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) return bad();
            out[pair.substr(0, eq)] = pair.substr(eq + 1);
            pair.clear();
          }
          return out;
        } else {
          auto v = split_command(text);
          if (v.empty()) return bad();
          return v;
        }
      },
      field_of(d, built_in()));
}

void read_file_layer(const std::string& file, std::map<std::string, Setting>& out) {
  std::string text = read_input(file);
  json root = toml_to_json(text, file, ExitStatus::config);
  Node r(root, file, "", ExitStatus::config);
  if (!r.is_object()) r.expected("TOML tables");
  ErrorList errors;  // every mistake of the file at once
  for (const auto& section : r.keys()) {
    errors.check([&] {
      Node sec = r.at(section);
      bool known_section = false;
      for (const auto& d : defs()) {
        known_section = known_section || d.key.rfind(section + ".", 0) == 0;
      }
      if (!known_section) {
        sec.fail("unknown section [" + section +
                 "] (known: controller, stages, nodes, agent, client, slurm)");
      }
      if (!sec.is_object()) sec.expected("a table [" + section + "]");
      for (const auto& k : sec.keys()) {
        errors.check([&] {
          const Def* d = find_def(section + "." + k);
          Node v = sec.at(k);
          if (!d) v.fail("unknown key \"" + k + "\" in [" + section + "] (see sia-config(5))");
          out[d->key] = Setting{d->key, from_file(*d, v, file), file};
        });
      }
    });
  }
  errors.throw_if_any();
}

// Checks ranges; `where(key)` names the setting and its source for messages.
void check(const Settings& c, const std::function<std::string(const std::string&)>& where) {
  ErrorList errors;  // every setting out of range, at once
  auto fail = [&](const std::string& key, const std::string& what) {
    errors.add(Error(ExitStatus::config, where(key) + ": " + what));
  };
  const auto& k = c.controller;
  // Durations become std::chrono values and deadlines: bounded above, so none overflows into
  // an instant expiry, and below, so that no loop spins (a round of 1e-300 s, a heartbeat
  // of 1e-9 s). The least is the agent's (sia-run agent --heartbeat-interval, --fence-after).
  constexpr double kLeast = 0.001;
  auto bounded = [&](const std::string& key, double v, double least, double most) {
    if (!(v >= least && v <= most)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.15g to %.15g", least, most);
      fail(key, "expected seconds from " + std::string(buf));
    }
  };
  auto seconds = [&](const std::string& key, double v, double most) {
    bounded(key, v, kLeast, most);
  };
  bounded("controller.round", k.round, 0.01, 86400);
  if (k.retention < 0) fail("controller.retention", "expected an integer >= 0");
  if (!(k.history_days >= 0 && k.history_days <= 36500)) {
    fail("controller.history_days", "expected days from 0 (forever) to 36500");
  }
  seconds("controller.stage_timeout", k.stage_timeout, 1e6);
  if (!(k.deadline_margin >= 0 && k.deadline_margin <= 10)) {
    fail("controller.deadline_margin", "expected a fraction from 0 to 10");
  }
  seconds("controller.heartbeat_interval", k.heartbeat_interval, 3600);
  if (k.heartbeat_liveness < 1 || k.heartbeat_liveness > 1000) {
    fail("controller.heartbeat_liveness", "expected an integer from 1 to 1000");
  }
  seconds("controller.fence_after", k.fence_after, 1e6);
  seconds("controller.silent_after", k.silent_after, 1e6);
  if (k.hung_timeout != 0 && !(k.hung_timeout >= kLeast && k.hung_timeout <= 1e6)) {
    fail("controller.hung_timeout", "expected 0 (never) or seconds from 0.001 to 1000000");
  }
  if (k.hung_retries < 0 || k.hung_retries > 1000) {
    fail("controller.hung_retries", "expected an integer from 0 to 1000");
  }
  if (k.peer_retries < 0 || k.peer_retries > 1000) {
    fail("controller.peer_retries", "expected an integer from 0 to 1000");
  }
  seconds("nodes.timeout", c.nodes.timeout, 1e6);
  // The transport takes messages up to 64 MiB (channel/hub.cpp); a limit above it could
  // never be reached.
  if (k.max_request_bytes < 4096 || k.max_request_bytes > (64 << 20)) {
    fail("controller.max_request_bytes", "expected bytes from 4096 to 67108864 (64 MiB)");
  }
  if (k.max_job_bytes < 1024 || k.max_job_bytes > k.max_request_bytes) {
    fail("controller.max_job_bytes", "expected bytes from 1024 to controller.max_request_bytes");
  }
  if (k.max_command_bytes < 256 || k.max_command_bytes > k.max_job_bytes) {
    fail("controller.max_command_bytes", "expected bytes from 256 to controller.max_job_bytes");
  }
  seconds("slurm.grace_seconds", c.slurm.grace_seconds, 86400);
  seconds("slurm.report_interval", c.slurm.report_interval, 86400);
  for (const auto& [from, to] : c.slurm.gres_types) {
    if (from.empty() || to.empty()) {
      fail("slurm.gres_types", "expected Slurm GPU type = catalog GPU type, both non-empty");
    }
  }
  if (!find_policy(k.policy)) {
    fail("controller.policy", "unknown policy \"" + k.policy + "\" (known: " + policy_list() + ")");
  }
  try {
    parse_profile_store(k.profile_store);
  } catch (const Error& e) {
    // "--profile-store: expected ...": the setting's name, then what.
    const std::string msg = e.what();
    fail("controller.profile_store", msg.substr(msg.find(": ") + 2));
  }
  for (const KnobProblem& p : knob_problems(k.policy_options)) {
    errors.add(Error(ExitStatus::config, describe(p, [&](const Knob& knob) {
                       return where("controller." + std::string(knob.key));
                     })));
  }
  errors.throw_if_any();
}

}  // namespace

std::vector<std::string> split_command(const std::string& command) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : command) {
    if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

const std::vector<SettingInfo>& setting_infos() {
  static const std::vector<SettingInfo> infos = [] {
    std::vector<SettingInfo> v;
    for (const auto& d : defs()) v.push_back({d.key, d.env, d.flag, d.description});
    return v;
  }();
  return infos;
}

const SettingInfo& setting_info(const std::string& key) {
  for (const auto& info : setting_infos()) {
    if (info.key == key) return info;
  }
  throw Error(ExitStatus::software, "unknown setting " + key);
}

std::string setting_flag_help(const std::string& key, const std::string& what,
                              const std::string& otherwise) {
  const SettingInfo& info = setting_info(key);
  return what + " (default: " + key + (info.env.empty() ? "" : ", $" + info.env) +
         (otherwise.empty() ? "" : ", else " + otherwise) + ")";
}

void ConfigSources::add_flags(const SettingFlags& values) {
  for (const auto& [key, value] : values) {
    if (!value.empty()) flags[key] = {setting_info(key).flag, value};
  }
}

Settings load_config(const ConfigSources& sources) {
  std::map<std::string, Setting> layer;
  for (const auto& d : defs()) layer[d.key] = Setting{d.key, default_value(d, sources), "default"};
  Settings c;
  auto add_file = [&](const std::string& file) {
    read_file_layer(file, layer);
    c.files.push_back(file);
  };
  std::error_code ec;
  if (!sources.system_file.empty() && fs::exists(sources.system_file, ec)) {
    add_file(sources.system_file);
  }
  std::string xdg = env_or(sources, "XDG_CONFIG_HOME");
  if (xdg.empty()) {
    if (auto h = env_or(sources, "HOME"); !h.empty()) xdg = h + "/.config";
  }
  if (!xdg.empty() && fs::exists(xdg + "/sia/config.toml", ec)) add_file(xdg + "/sia/config.toml");
  std::string explicit_file = sources.config_file;
  if (explicit_file.empty()) explicit_file = env_or(sources, "SIA_CONFIG");
  if (!explicit_file.empty()) {
    if (!fs::exists(explicit_file, ec)) {
      throw Error(ExitStatus::no_input,
                  explicit_file + ": no such configuration file" +
                      (sources.config_file.empty() ? " (named by SIA_CONFIG)" : ""));
    }
    add_file(explicit_file);
  }
  for (const auto& d : defs()) {
    if (d.env.empty()) continue;
    const char* v = sources.getenv ? sources.getenv(d.env.c_str()) : std::getenv(d.env.c_str());
    if (!v || !*v) continue;
    layer[d.key] = Setting{d.key, from_text(d, v, "environment " + d.env, ExitStatus::config),
                           "environment " + d.env};
  }
  for (const auto& [key, flag] : sources.flags) {
    const Def* d = find_def(key);
    if (!d) throw Error(ExitStatus::software, "unknown setting " + key);
    layer[key] = Setting{key, from_text(*d, flag.second, flag.first, ExitStatus::usage),
                         "flag " + flag.first};
  }

  // Default: beside the controller's state, right for one machine; a cluster of several
  // machines sets it to storage that every node mounts at the same path.
  Setting& ckpt = layer.at("controller.checkpoint_root");
  const std::string state_dir = layer.at("controller.state_dir").value.get<std::string>();
  if (ckpt.value.get<std::string>().empty() && !state_dir.empty()) {
    ckpt.value = (fs::path(state_dir) / "ckpt").lexically_normal().string();
  }
  Setting& shared = layer.at("slurm.shared_dir");
  if (shared.value.get<std::string>().empty() && !state_dir.empty()) {
    shared.value = (fs::path(state_dir) / "slurm").lexically_normal().string();
  }
  ErrorList errors;
  for (const auto& d : defs()) {
    const Setting& s = layer.at(d.key);
    errors.check([&] { store(d, s.value, c, d.key + " (" + s.source + ")"); });
  }
  errors.throw_if_any();
  for (const auto& d : defs()) c.settings.push_back(layer.at(d.key));
  check(c, [&](const std::string& key) { return key + " (" + layer.at(key).source + ")"; });
  return c;
}

json config_to_json(const Settings& config) {
  json settings = json::array();
  for (const auto& s : config.settings) {
    const Def* d = find_def(s.key);
    settings.push_back({{"key", s.key},
                        {"value", s.value},
                        {"source", s.source},
                        {"env", d && !d->env.empty() ? json(d->env) : json(nullptr)}});
  }
  return {{"files", config.files}, {"settings", settings}};
}

std::string config_table(const Settings& config) {
  cli::Table t({"key", "value", "source"});
  for (const auto& s : config.settings) {
    std::string v;
    if (s.value.is_string()) {
      v = s.value.get<std::string>();
      if (v.empty()) v = "\"\"";
    } else if (s.value.is_array()) {
      for (const auto& x : s.value) v += (v.empty() ? "" : " ") + x.get<std::string>();
    } else if (s.value.is_object()) {
      for (const auto& [from, to] : s.value.items()) {
        v += (v.empty() ? "" : ",") + from + "=" + to.get<std::string>();
      }
    } else {
      v = s.value.dump();
    }
    t.add({s.key, v, s.source});
  }
  return t.render();
}

}  // namespace sia::ctl
