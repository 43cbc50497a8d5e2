#include "ctl/config.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "cli/table.hpp"
#include "core/document.hpp"
#include "core/error.hpp"
#include "core/toml_json.hpp"

namespace sia::ctl {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

enum class Kind { string, path, number, integer, strings };

struct Def {
  const char* key;
  Kind kind;
  const char* env;
  const char* description;
};

// Documentation order; sia-config(5) follows it.
const Def kDefs[] = {
    {"controller.state_dir", Kind::path, "SIA_CTL_STATE_DIR", "controller state directory"},
    {"controller.cluster", Kind::path, "SIA_CLUSTER", "cluster.toml the controller schedules"},
    {"controller.catalog", Kind::path, "SIA_CATALOG", "model catalog directory"},
    {"controller.bind", Kind::string, "SIA_CTL_BIND", "endpoint serve binds"},
    {"controller.round", Kind::number, "SIA_CTL_ROUND", "seconds between serve's rounds"},
    {"controller.retention", Kind::integer, "SIA_CTL_RETENTION", "rounds kept in STATE/rounds"},
    {"controller.history_days", Kind::number, "SIA_CTL_HISTORY_DAYS",
     "days an ended job stays in the book and in history (0: forever)"},
    {"controller.policy", Kind::string, "SIA_CTL_POLICY", "scheduling policy"},
    {"controller.p", Kind::number, "SIA_CTL_P", "Sia's fairness power"},
    {"controller.lambda_n", Kind::number, "SIA_CTL_LAMBDA_N", "Sia's lambda_n"},
    {"controller.lambda_a", Kind::number, "SIA_CTL_LAMBDA_A", "Sia's lambda_a"},
    {"controller.time_limit", Kind::number, "SIA_CTL_TIME_LIMIT", "solver time limit, seconds"},
    {"controller.stage_timeout", Kind::number, "SIA_CTL_STAGE_TIMEOUT",
     "seconds an external stage may run"},
    {"controller.heartbeat_interval", Kind::number, "SIA_CTL_HEARTBEAT_INTERVAL",
     "seconds between heartbeats"},
    {"controller.heartbeat_liveness", Kind::integer, "SIA_CTL_HEARTBEAT_LIVENESS",
     "missed heartbeats before a peer is down"},
    {"controller.fence_after", Kind::number, "SIA_CTL_FENCE_AFTER",
     "seconds without the controller before an agent stops its jobs"},
    {"controller.secret_key", Kind::path, "SIA_CTL_SECRET_KEY", "controller's secret key file"},
    {"controller.allow", Kind::path, "SIA_CTL_ALLOW", "allow-list of agent and client keys"},
    {"controller.checkpoint_root", Kind::path, "SIA_CHECKPOINT_ROOT",
     "where jobs checkpoint (ROOT/JOB), the same path on every node"},
    {"controller.silent_after", Kind::number, "SIA_CTL_SILENT_AFTER",
     "seconds without a report before a running job is flagged silent"},
    {"controller.hung_timeout", Kind::number, "SIA_CTL_HUNG_TIMEOUT",
     "seconds without a report before a running job is restarted (0: never)"},
    {"controller.hung_retries", Kind::integer, "SIA_CTL_HUNG_RETRIES",
     "restarts of a silent job before it fails"},
    {"stages.estimate", Kind::string, "SIA_STAGE_ESTIMATE", "estimate stage program"},
    {"stages.solve", Kind::string, "SIA_STAGE_SOLVE", "solve stage program"},
    {"stages.place", Kind::string, "SIA_STAGE_PLACE", "place stage program"},
    {"nodes.apply", Kind::strings, "", "command giving a node its placement"},
    {"nodes.reports", Kind::strings, "", "command reading a node's reports"},
    {"nodes.status", Kind::strings, "", "command reading what a node runs"},
    {"nodes.logs", Kind::strings, "", "command reading a rank's log on a node"},
    {"nodes.timeout", Kind::number, "SIA_NODES_TIMEOUT", "seconds one node command may run"},
    {"agent.connect", Kind::string, "SIA_AGENT_CONNECT", "controller endpoint"},
    {"agent.node", Kind::string, "SIA_AGENT_NODE", "this node's name"},
    {"agent.state_dir", Kind::path, "SIA_STATE_DIR", "sia-run state directory"},
    {"agent.server_key", Kind::path, "SIA_AGENT_SERVER_KEY", "controller's public key file"},
    {"agent.secret_key", Kind::path, "SIA_AGENT_SECRET_KEY", "node's secret key file"},
    {"client.connect", Kind::string, "SIA_CLIENT_CONNECT", "controller endpoint"},
    {"client.server_key", Kind::path, "SIA_CLIENT_SERVER_KEY", "controller's public key file"},
    {"client.secret_key", Kind::path, "SIA_CLIENT_SECRET_KEY", "client's secret key file"},
};

const Def* find_def(const std::string& key) {
  for (const auto& d : kDefs) {
    if (key == d.key) return &d;
  }
  return nullptr;
}

std::string env_or(const ConfigSources& s, const char* name) {
  const char* v = s.getenv ? s.getenv(name) : std::getenv(name);
  return v ? v : "";
}

json default_value(const Def& d, const ConfigSources& s) {
  const std::string key = d.key;
  if (key == "controller.state_dir") {
    if (auto x = env_or(s, "XDG_STATE_HOME"); !x.empty()) return x + "/sia/ctl";
    if (auto h = env_or(s, "HOME"); !h.empty()) return h + "/.local/state/sia/ctl";
    return "";
  }
  static const PolicyOptions po;
  if (key == "controller.bind") return "tcp://127.0.0.1:7400";
  if (key == "controller.round") return 60.0;
  if (key == "controller.retention") return 200;
  if (key == "controller.history_days") return 90.0;
  if (key == "controller.policy") return "sia";
  if (key == "controller.p") return po.p;
  if (key == "controller.lambda_n") return po.lambda_n;
  if (key == "controller.lambda_a") return po.lambda_a;
  if (key == "controller.time_limit") return po.time_limit;
  if (key == "controller.stage_timeout") return 120.0;
  if (key == "controller.heartbeat_interval") return channel::kChannelTiming.heartbeat_interval;
  if (key == "controller.heartbeat_liveness") return channel::kChannelTiming.heartbeat_liveness;
  if (key == "controller.fence_after") return channel::kChannelTiming.fence_after;
  if (key == "controller.silent_after") return 120.0;
  if (key == "controller.hung_timeout") return 600.0;
  if (key == "controller.hung_retries") return 2;
  if (key == "nodes.apply") {
    return json::array({"sia-run", "--state-dir", "{state}/nodes/{node}", "apply", "--node",
                        "{node}", "--cluster", "{cluster}", "--jobs", "{jobs}", "-o", "json", "-"});
  }
  if (key == "nodes.reports") {
    return json::array(
        {"sia-run", "--state-dir", "{state}/nodes/{node}", "reports", "-o", "jsonl"});
  }
  if (key == "nodes.status") {
    return json::array({"sia-run", "--state-dir", "{state}/nodes/{node}", "status", "-o", "json"});
  }
  if (key == "nodes.logs") {
    return json::array({"sia-run", "--state-dir", "{state}/nodes/{node}", "logs"});
  }
  if (key == "nodes.timeout") return 300.0;
  if (key == "agent.connect") return "tcp://127.0.0.1:7400";
  return "";
}

const char* kind_text(Kind k) {
  switch (k) {
    case Kind::string:
    case Kind::path:
      return "a string";
    case Kind::number:
      return "a number";
    case Kind::integer:
      return "an integer";
    case Kind::strings:
      return "a list of strings";
  }
  return "a value";
}

// Checks a value read from a file (already JSON) against the key's kind.
json from_file(const Def& d, const Node& n, const std::string& file) {
  switch (d.kind) {
    case Kind::string:
      return n.as_string();
    case Kind::path: {
      std::string p = n.as_string();
      if (!p.empty() && p[0] != '/') {
        fs::path base = fs::absolute(file).parent_path();  // "c.toml": the working directory
        p = (base / p).lexically_normal().string();
      }
      return p;
    }
    case Kind::number:
      return n.as_number();
    case Kind::integer:
      return n.as_int();
    case Kind::strings: {
      auto v = n.as_strings();
      if (v.empty()) n.expected("a non-empty list of strings (program and arguments)");
      return v;
    }
  }
  return nullptr;
}

// Converts a value typed on the command line or in the environment.
json from_text(const Def& d, const std::string& text, const std::string& where, ExitStatus status) {
  auto bad = [&]() -> json {
    throw Error(status, where + ": expected " + kind_text(d.kind) + ", got \"" + text + "\"");
  };
  switch (d.kind) {
    case Kind::string:
      return text;
    case Kind::path:
      return text.empty() ? text : fs::absolute(text).lexically_normal().string();
    case Kind::number: {
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(v)) return bad();
      return v;
    }
    case Kind::integer: {
      char* end = nullptr;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0') return bad();
      return v;
    }
    case Kind::strings: {
      auto v = split_command(text);
      if (v.empty()) return bad();
      return v;
    }
  }
  return nullptr;
}

void read_file_layer(const std::string& file, std::map<std::string, Setting>& out) {
  std::string text = read_input(file);
  json root = toml_to_json(text, file, ExitStatus::config);
  Node r(root, file, "", ExitStatus::config);
  if (!r.is_object()) r.expected("TOML tables");
  for (const auto& section : r.keys()) {
    Node sec = r.at(section);
    bool known_section = false;
    for (const auto& d : kDefs) {
      known_section = known_section || std::string(d.key).rfind(section + ".", 0) == 0;
    }
    if (!known_section) {
      sec.fail("unknown section [" + section +
               "] (known: controller, stages, nodes, agent, client)");
    }
    if (!sec.is_object()) sec.expected("a table [" + section + "]");
    for (const auto& k : sec.keys()) {
      const Def* d = find_def(section + "." + k);
      Node v = sec.at(k);
      if (!d) v.fail("unknown key \"" + k + "\" in [" + section + "] (see sia-config(5))");
      out[d->key] = Setting{d->key, from_file(*d, v, file), file};
    }
  }
}

// Checks ranges; `where(key)` names the setting and its source for messages.
void check(const Settings& c, const std::function<std::string(const std::string&)>& where) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw Error(ExitStatus::config, where(key) + ": " + what);
  };
  const auto& k = c.controller;
  // Durations become std::chrono values and deadlines: bounded, so none overflows into an
  // instant expiry.
  auto seconds = [&](const std::string& key, double v, double most) {
    if (!(v > 0 && v <= most)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", most);
      fail(key, "expected seconds > 0 and at most " + std::string(buf));
    }
  };
  seconds("controller.round", k.round, 86400);
  if (k.retention < 0) fail("controller.retention", "expected an integer >= 0");
  if (!(k.history_days >= 0 && k.history_days <= 36500)) {
    fail("controller.history_days", "expected days from 0 (forever) to 36500");
  }
  seconds("controller.stage_timeout", k.stage_timeout, 1e6);
  seconds("controller.heartbeat_interval", k.heartbeat_interval, 3600);
  if (k.heartbeat_liveness < 1 || k.heartbeat_liveness > 1000) {
    fail("controller.heartbeat_liveness", "expected an integer from 1 to 1000");
  }
  seconds("controller.fence_after", k.fence_after, 1e6);
  seconds("controller.silent_after", k.silent_after, 1e6);
  if (!(k.hung_timeout >= 0 && k.hung_timeout <= 1e6)) {
    fail("controller.hung_timeout", "expected seconds from 0 (never) to 1000000");
  }
  if (k.hung_retries < 0 || k.hung_retries > 1000) {
    fail("controller.hung_retries", "expected an integer from 0 to 1000");
  }
  seconds("nodes.timeout", c.nodes.timeout, 1e6);
  if (!find_policy(k.policy)) {
    fail("controller.policy", "unknown policy \"" + k.policy + "\" (known: " + policy_list() + ")");
  }
  try {
    validate_policy_options(k.policy_options);
  } catch (const Error& e) {
    throw Error(ExitStatus::config, std::string("policy knobs (") + where("controller.p") + ", " +
                                        where("controller.lambda_n") + "): " + e.what());
  }
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
    for (const auto& d : kDefs) v.push_back({d.key, d.env, d.description});
    return v;
  }();
  return infos;
}

Settings load_config(const ConfigSources& sources) {
  std::map<std::string, Setting> layer;
  for (const auto& d : kDefs) layer[d.key] = Setting{d.key, default_value(d, sources), "default"};
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
  for (const auto& d : kDefs) {
    if (!*d.env) continue;
    const char* v = sources.getenv ? sources.getenv(d.env) : std::getenv(d.env);
    if (!v || !*v) continue;
    layer[d.key] =
        Setting{d.key, from_text(d, v, std::string("environment ") + d.env, ExitStatus::config),
                std::string("environment ") + d.env};
  }
  for (const auto& [key, flag] : sources.flags) {
    const Def* d = find_def(key);
    if (!d) throw Error(ExitStatus::software, "unknown setting " + key);
    layer[key] = Setting{key, from_text(*d, flag.second, flag.first, ExitStatus::usage),
                         "flag " + flag.first};
  }

  auto str = [&](const char* k) { return layer.at(k).value.get<std::string>(); };
  auto num = [&](const char* k) { return layer.at(k).value.get<double>(); };
  auto integer = [&](const char* k) -> int {
    const json& v = layer.at(k).value;
    double x = v.get<double>();
    if (x < -1e9 || x > 1e9) {
      throw Error(ExitStatus::config, std::string(k) + " (" + layer.at(k).source +
                                          "): expected an integer of a sensible size");
    }
    return static_cast<int>(x);
  };
  auto strs = [&](const char* k) { return layer.at(k).value.get<std::vector<std::string>>(); };
  auto& k = c.controller;
  k.state_dir = str("controller.state_dir");
  k.cluster = str("controller.cluster");
  k.catalog = str("controller.catalog");
  k.bind = str("controller.bind");
  k.round = num("controller.round");
  k.retention = integer("controller.retention");
  k.history_days = num("controller.history_days");
  k.policy = str("controller.policy");
  k.policy_options.p = num("controller.p");
  k.policy_options.lambda_n = num("controller.lambda_n");
  k.policy_options.lambda_a = num("controller.lambda_a");
  k.policy_options.time_limit = num("controller.time_limit");
  k.stage_timeout = num("controller.stage_timeout");
  k.heartbeat_interval = num("controller.heartbeat_interval");
  k.heartbeat_liveness = integer("controller.heartbeat_liveness");
  k.fence_after = num("controller.fence_after");
  k.silent_after = num("controller.silent_after");
  k.hung_timeout = num("controller.hung_timeout");
  k.hung_retries = integer("controller.hung_retries");
  k.secret_key = str("controller.secret_key");
  k.allow = str("controller.allow");
  // Default: beside the controller's state, right for one machine; a cluster of several
  // machines sets it to storage that every node mounts at the same path.
  if (layer.at("controller.checkpoint_root").value.get<std::string>().empty() &&
      !k.state_dir.empty()) {
    layer["controller.checkpoint_root"].value =
        (fs::path(k.state_dir) / "ckpt").lexically_normal().string();
  }
  k.checkpoint_root = str("controller.checkpoint_root");
  c.stages.estimate = str("stages.estimate");
  c.stages.solve = str("stages.solve");
  c.stages.place = str("stages.place");
  c.nodes.apply = strs("nodes.apply");
  c.nodes.reports = strs("nodes.reports");
  c.nodes.status = strs("nodes.status");
  c.nodes.logs = strs("nodes.logs");
  c.nodes.timeout = num("nodes.timeout");
  c.agent.connect = str("agent.connect");
  c.agent.node = str("agent.node");
  c.agent.state_dir = str("agent.state_dir");
  c.agent.server_key = str("agent.server_key");
  c.agent.secret_key = str("agent.secret_key");
  c.client.connect = str("client.connect");
  c.client.server_key = str("client.server_key");
  c.client.secret_key = str("client.secret_key");
  for (const auto& d : kDefs) c.settings.push_back(layer.at(d.key));
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
                        {"env", d && *d->env ? json(d->env) : json(nullptr)}});
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
    } else {
      v = s.value.dump();
    }
    t.add({s.key, v, s.source});
  }
  return t.render();
}

}  // namespace sia::ctl
