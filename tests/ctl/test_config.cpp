#include <catch2/catch.hpp>

#include <algorithm>

#include <map>

#include "ctl/config.hpp"
#include "ctl_test_util.hpp"
#include "policy/knobs.hpp"
#include "test_util.hpp"

using namespace sia::ctl;
using sia::ctl::test::TempDir;
using sia::ctl::test::write_text;

namespace {

const Setting& setting(const Settings& c, const std::string& key) {
  for (const auto& s : c.settings) {
    if (s.key == key) return s;
  }
  FAIL("no setting " << key);
  throw 0;
}

ConfigSources sources(const std::map<std::string, std::string>& env, const std::string& system) {
  ConfigSources s;
  auto copy = std::make_shared<std::map<std::string, std::string>>(env);
  s.getenv = [copy](const char* name) -> const char* {
    auto it = copy->find(name);
    return it == copy->end() ? nullptr : it->second.c_str();
  };
  s.system_file = system;
  return s;
}

// `text` as the --config file (dir/c.toml), with no system file and no environment.
Settings load_text(const TempDir& dir, const std::string& text) {
  write_text(dir / "c.toml", text);
  auto s = sources({}, "");
  s.config_file = dir / "c.toml";
  return load_config(s);
}

}  // namespace

TEST_CASE("settings come from defaults, files, environment and flags in that order", "[config]") {
  TempDir dir;
  write_text(dir / "etc.toml",
             "[controller]\nround = 30\nretention = 5\npolicy = \"themis\"\n"
             "cluster = \"clusters/c.toml\"\n");
  std::filesystem::create_directories(dir / "xdg/sia");
  write_text(dir / "xdg/sia/config.toml", "[controller]\nround = 20\n");
  write_text(dir / "mine.toml", "[controller]\nretention = 7\n[stages]\nsolve = \"sia-solve\"\n");
  auto s = sources({{"XDG_CONFIG_HOME", dir / "xdg"},
                    {"HOME", dir.path()},
                    {"SIA_CTL_RETENTION", "9"},
                    {"SIA_CTL_POLICY", "sia"}},
                   dir / "etc.toml");
  s.config_file = dir / "mine.toml";
  s.flags["controller.policy"] = {"--policy", "fifo"};
  Settings c = load_config(s);

  CHECK(c.controller.round == 20);
  CHECK(setting(c, "controller.round").source == dir / "xdg/sia/config.toml");
  CHECK(c.controller.retention == 9);
  CHECK(setting(c, "controller.retention").source == "environment SIA_CTL_RETENTION");
  CHECK(c.controller.policy == "fifo");
  CHECK(setting(c, "controller.policy").source == "flag --policy");
  CHECK(c.stages.solve == "sia-solve");
  CHECK(setting(c, "stages.solve").source == dir / "mine.toml");
  // A relative path in a file is relative to the file.
  CHECK(c.controller.cluster == dir / "clusters/c.toml");
  CHECK(setting(c, "controller.bind").source == "default");
  CHECK(c.controller.state_dir == dir.path() + "/.local/state/sia/ctl");
  CHECK(c.files ==
        std::vector<std::string>{dir / "etc.toml", dir / "xdg/sia/config.toml", dir / "mine.toml"});
  // The default node commands run a local sia-run per node.
  CHECK(c.nodes.apply.front() == "sia-run");
  // The table names each source.
  std::string table = config_table(c);
  CHECK(table.find("environment SIA_CTL_RETENTION") != std::string::npos);
  CHECK(config_to_json(c)["settings"].size() == setting_infos().size());
}

TEST_CASE("SIA_CONFIG names the file when --config does not", "[config]") {
  TempDir dir;
  write_text(dir / "c.toml", "[controller]\nround = 5\n");
  Settings c = load_config(sources({{"SIA_CONFIG", dir / "c.toml"}}, ""));
  CHECK(c.controller.round == 5);
  auto e = sia::test::error_of([&] {
    load_config(sources({{"SIA_CONFIG", dir / "nope.toml"}}, ""));
  });
  CHECK(e.first == 66);
}

TEST_CASE("a bad configuration names the file and the field", "[config]") {
  TempDir dir;
  auto load_file = [&](const std::string& text) { return load_text(dir, text); };
  auto e = sia::test::error_of([&] { load_file("[controller]\nrond = 3\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("c.toml: controller.rond: unknown key \"rond\" in [controller]") !=
        std::string::npos);
  e = sia::test::error_of([&] { load_file("[controler]\nround = 3\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("unknown section [controler]") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\nround = \"soon\"\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("c.toml: controller.round: expected a number") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\nround = -1\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("controller.round (" + dir / "c.toml" + "): expected") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\npolicy = \"best\"\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("unknown policy \"best\"") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[nodes]\napply = []\n"); });
  CHECK(e.first == 78);
  e = sia::test::error_of([&] { load_file("[controller\n"); });
  CHECK(e.first == 78);
  e = sia::test::error_of([&] { load_file("[controller]\np = 0\n"); });
  CHECK(e.first == 78);

  // The environment and flags are named too; a bad flag is a usage error.
  e = sia::test::error_of([&] { load_config(sources({{"SIA_CTL_ROUND", "x"}}, "")); });
  CHECK(e.first == 78);
  CHECK(e.second == "environment SIA_CTL_ROUND: expected a number, got \"x\"");
  auto s = sources({}, "");
  s.flags["controller.round"] = {"--round", "abc"};
  e = sia::test::error_of([&] { load_config(s); });
  CHECK(e.first == 64);
  CHECK(e.second == "--round: expected a number, got \"abc\"");

  // A file of several mistakes: all of them, one a line -- those of its keys, then those of
  // the ranges.
  e = sia::test::error_of(
      [&] { load_file("[controller]\nrond = 3\nround = \"soon\"\n[controler]\nx = 1\n"); });
  CHECK(e.first == 78);
  const std::string file = dir / "c.toml";
  CHECK(e.second == file + ": controler: unknown section [controler] (known: controller, " +
                        "stages, nodes, agent, client, slurm)\n" + file +
                        ": controller.rond: unknown key \"rond\" in [controller] (see " +
                        "sia-config(5))\n" + file +
                        ": controller.round: expected a number, got the string \"soon\"");
  e = sia::test::error_of(
      [&] { load_file("[controller]\nround = -1\npolicy = \"best\"\nhung_retries = -2\n"); });
  CHECK(e.first == 78);
  CHECK(std::count(e.second.begin(), e.second.end(), '\n') == 2);
  CHECK(e.second.find("controller.round (") == 0);
  CHECK(e.second.find("\ncontroller.hung_retries (") != std::string::npos);
  CHECK(e.second.find("unknown policy \"best\"") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\npeer_retries = 1001\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("controller.peer_retries (") == 0);
  CHECK(e.second.find("expected an integer from 0 to 1000") != std::string::npos);
}

TEST_CASE("durations have a lower bound as well as an upper one", "[config]") {
  TempDir dir;
  auto error_for = [&](const std::string& text) {
    write_text(dir / "c.toml", text);
    auto s = sources({}, "");
    s.config_file = dir / "c.toml";
    return sia::test::error_of([&] { load_config(s); });
  };
  const std::string where = " (" + dir / "c.toml" + "): ";
  auto e = error_for("[controller]\nround = 1e-300\n");
  CHECK(e.first == 78);
  CHECK(e.second == "controller.round" + where + "expected seconds from 0.01 to 86400");
  e = error_for("[controller]\nheartbeat_interval = 1e-9\n");
  CHECK(e.first == 78);
  CHECK(e.second ==
        "controller.heartbeat_interval" + where + "expected seconds from 0.001 to 3600");
  e = error_for("[controller]\nfence_after = 0.0001\n");
  CHECK(e.second == "controller.fence_after" + where + "expected seconds from 0.001 to 1000000");
  e = error_for("[controller]\nhung_timeout = 1e-6\n");
  CHECK(e.second ==
        "controller.hung_timeout" + where + "expected 0 (never) or seconds from 0.001 to 1000000");
  e = error_for("[nodes]\ntimeout = 1e-5\n");
  CHECK(e.second == "nodes.timeout" + where + "expected seconds from 0.001 to 1000000");
  // The bounds themselves are taken, and hung_timeout's 0 (never).
  e = error_for("[controller]\nround = 0.01\nheartbeat_interval = 0.001\nhung_timeout = 0\n");
  CHECK(e.first == 0);
}

TEST_CASE("the Sia+ knobs and the profile store are settings", "[config]") {
  TempDir dir;
  Settings d = load_config(sources({}, ""));
  CHECK(d.controller.policy_options.min_efficiency == 0.33);  // the default profile's
  CHECK(d.controller.policy_options.restart_remaining);
  CHECK(d.controller.policy_options.remaining_scale == 28800);
  CHECK(d.controller.policy_options.gpu_price == 0.0005);
  CHECK(d.controller.profile_store == "scale-up");
  write_text(dir / "c.toml",
             "[controller]\nmin_efficiency = 0\nrestart_remaining = false\nhysteresis = 0.05\n"
             "remaining_scale = 3600\nremaining_floor = 0.25\nremaining_aging = 0\n"
             "gpu_price = 0.001\nprofile_store = \"off\"\n");
  auto s = sources({}, "");
  s.config_file = dir / "c.toml";
  Settings c = load_config(s);
  CHECK(c.controller.policy_options.min_efficiency == 0);
  CHECK(!c.controller.policy_options.restart_remaining);
  CHECK(c.controller.policy_options.hysteresis == 0.05);
  CHECK(c.controller.policy_options.remaining_scale == 3600);
  CHECK(c.controller.policy_options.remaining_floor == 0.25);
  CHECK(c.controller.policy_options.remaining_aging == 0);
  CHECK(c.controller.policy_options.gpu_price == 0.001);
  CHECK(
      load_config(sources({{"SIA_CTL_GPU_PRICE", "0"}}, "")).controller.policy_options.gpu_price ==
      0);
  CHECK(c.controller.profile_store == "off");
  CHECK(load_config(sources({{"SIA_CTL_RESTART_REMAINING", "0"}}, ""))
            .controller.policy_options.restart_remaining == false);
  // Each bad value names its own key.
  auto e = sia::test::error_of([&] {
    load_config(sources({{"SIA_CTL_RESTART_REMAINING", "maybe"}}, ""));
  });
  CHECK(e.first == 78);
  CHECK(e.second == "environment SIA_CTL_RESTART_REMAINING: expected true or false, got \"maybe\"");
  e = sia::test::error_of([&] { load_config(sources({{"SIA_CTL_PROFILE_STORE", "on"}}, "")); });
  CHECK(e.first == 78);
  CHECK(e.second.find("controller.profile_store (environment SIA_CTL_PROFILE_STORE): expected off, "
                      "fit or scale-up") == 0);
  e = sia::test::error_of([&] { load_config(sources({{"SIA_CTL_MIN_EFFICIENCY", "2"}}, "")); });
  CHECK(e.first == 78);
  CHECK(e.second ==
        "controller.min_efficiency (environment SIA_CTL_MIN_EFFICIENCY): must be between 0 and 1");
}

TEST_CASE("every policy knob is a setting, from its row of the knob table", "[config][knobs]") {
  TempDir dir;
  const Settings d = load_config(sources({}, ""));
  for (const sia::Knob& k : sia::knob_table()) {
    INFO(k.key);
    const SettingInfo& info = setting_info(std::string("controller.") + k.key);
    CHECK(info.env == k.env);
    CHECK(info.description == k.what);
    CHECK(setting(d, info.key).source == "default");
  }
  // The baselines' knobs, from a file and from the environment.
  write_text(dir / "c.toml", "[controller]\nthemis_f = 0.5\nseed = 7\npollux_population = 10\n");
  auto s = sources({{"SIA_CTL_GAVEL_RESET", "3600"}, {"SIA_CTL_MIP_GAP", "0.01"}}, "");
  s.config_file = dir / "c.toml";
  const Settings c = load_config(s);
  CHECK(c.controller.policy_options.themis_f == 0.5);
  CHECK(c.controller.policy_options.seed == 7u);
  CHECK(c.controller.policy_options.pollux_population == 10);
  CHECK(c.controller.policy_options.gavel_reset == 3600);
  CHECK(c.controller.policy_options.mip_gap == 0.01);
  // A value out of range: one line naming the key and where it came from, status 78.
  const std::string where = " (" + dir / "c.toml" + ")";
  auto error_for = [&](const std::string& text) {
    write_text(dir / "c.toml", text);
    auto s2 = sources({}, "");
    s2.config_file = dir / "c.toml";
    return sia::test::error_of([&] { load_config(s2); });
  };
  CHECK(
      error_for("[controller]\nthemis_f = 2\n") ==
      std::pair<int, std::string>{78, "controller.themis_f" + where + ": must be between 0 and 1"});
  CHECK(error_for("[controller]\nseed = -1\n").first == 78);
  CHECK(error_for("[controller]\nnode_limit = 1.5\n").first == 78);
  // The sign rule names both keys, each with its source.
  auto e = error_for("[controller]\np = 1\n");
  CHECK(e.first == 78);
  CHECK(
      e.second.rfind("controller.lambda_n (default): must have the opposite sign of controller.p" +
                         where + " (p = 1)",
                     0) == 0);
}

TEST_CASE("stage commands split on spaces", "[config]") {
  CHECK(split_command("  sia-solve --policy  themis ") ==
        std::vector<std::string>{"sia-solve", "--policy", "themis"});
  CHECK(split_command("").empty());
}

TEST_CASE("a setting's flag, help and default come from its one row", "[config]") {
  // The flag layer: each typed value under its key's flag; empty values are not given.
  auto s = sources({}, "");
  s.add_flags({{"controller.round", "15"}, {"controller.policy", ""}, {"agent.node", "t4-0"}});
  Settings c = load_config(s);
  CHECK(c.controller.round == 15);
  CHECK(setting(c, "controller.round").source == "flag --round");
  CHECK(setting(c, "controller.policy").source == "default");
  CHECK(c.agent.node == "t4-0");
  CHECK(setting(c, "agent.node").source == "flag --node");
  CHECK(setting_flag_help("controller.cluster", "Cluster file") ==
        "Cluster file (default: controller.cluster, $SIA_CLUSTER)");
  CHECK(setting_flag_help("controller.state_dir", "State", "X") ==
        "State (default: controller.state_dir, $SIA_CTL_STATE_DIR, else X)");
  CHECK(sia::test::error_of([] { setting_info("controller.nope"); }).first == 70);

  // Defaults are the members' initial values, whatever their type.
  const Settings built_in;
  Settings d = load_config(sources({}, ""));
  CHECK(d.nodes.apply == built_in.nodes.apply);
  CHECK(d.controller.heartbeat_liveness == built_in.controller.heartbeat_liveness);
  CHECK(d.controller.policy_options.p == built_in.controller.policy_options.p);
  CHECK(setting(d, "nodes.timeout").value == built_in.nodes.timeout);
  CHECK(setting(d, "controller.hung_retries").value == built_in.controller.hung_retries);
  CHECK(built_in.controller.peer_retries == 3);
  CHECK(setting(d, "controller.peer_retries").value == 3);
  // A value that does not fit its integer field is refused, never wrapped.
  auto big = sources({{"SIA_CTL_RETENTION", "99999999999"}}, "");
  CHECK(sia::test::error_of([&] { load_config(big); }).first == 78);
}

TEST_CASE("the request and job limits are settings with sane bounds", "[config][limits]") {
  TempDir dir;
  auto load_file = [&](const std::string& text) { return load_text(dir, text); };
  Settings c = load_config(sources({}, ""));
  CHECK(c.controller.max_request_bytes == 1048576);
  CHECK(c.controller.max_command_bytes == 65536);
  CHECK(c.controller.max_job_bytes == 131072);
  CHECK(c.agent.controller_user.empty());
  c = load_file(
      "[controller]\nmax_request_bytes = 65536\nmax_job_bytes = 8192\nmax_command_bytes = 4096\n"
      "[agent]\ncontroller_user = \"sia\"\n");
  CHECK(c.controller.max_request_bytes == 65536);
  CHECK(c.controller.max_job_bytes == 8192);
  CHECK(c.controller.max_command_bytes == 4096);
  CHECK(c.agent.controller_user == "sia");
  c = load_config(sources({{"SIA_CTL_MAX_REQUEST_BYTES", "200000"}}, ""));
  CHECK(c.controller.max_request_bytes == 200000);
  auto e = sia::test::error_of([&] { load_file("[controller]\nmax_request_bytes = 100\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("controller.max_request_bytes (") != std::string::npos);
  CHECK(e.second.find("expected bytes from 4096 to 67108864 (64 MiB)") != std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\nmax_request_bytes = 100000000\n"); });
  CHECK(e.first == 78);
  e = sia::test::error_of(
      [&] { load_file("[controller]\nmax_request_bytes = 65536\nmax_job_bytes = 70000\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("expected bytes from 1024 to controller.max_request_bytes") !=
        std::string::npos);
  e = sia::test::error_of([&] { load_file("[controller]\nmax_command_bytes = 200000\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("expected bytes from 256 to controller.max_job_bytes") != std::string::npos);
}

TEST_CASE("[slurm] maps Slurm's GPU types by a table, from a file or the environment", "[config]") {
  TempDir dir;
  auto c =
      load_text(dir,
                "[controller]\nstate_dir = \"st\"\n[slurm]\nenabled = true\n"
                "partition = \"gpu\"\ngres_types = { rtx2080ti = \"rtx\", a100 = \"a100\" }\n");
  CHECK(c.slurm.enabled);
  CHECK(c.slurm.partition == "gpu");
  CHECK(c.slurm.gres_types ==
        std::map<std::string, std::string>{{"a100", "a100"}, {"rtx2080ti", "rtx"}});
  CHECK(c.slurm.shared_dir == dir / "st/slurm");  // beside the controller's state
  CHECK(c.slurm.grace_seconds == 30);
  CHECK(config_table(c).find("a100=a100,rtx2080ti=rtx") != std::string::npos);

  c = load_config(sources({{"SIA_SLURM_GRES_TYPES", "v100=v100,rtx2080ti=rtx"}}, ""));
  CHECK(c.slurm.gres_types.at("rtx2080ti") == "rtx");
  CHECK(c.slurm.gres_types.size() == 2);
  auto e = sia::test::error_of([&] {
    load_config(sources({{"SIA_SLURM_GRES_TYPES", "v100=v100,rtx"}}, ""));
  });
  CHECK(e.first == 78);
  CHECK(e.second ==
        "environment SIA_SLURM_GRES_TYPES: expected a table of strings, got \"v100=v100,rtx\"");
  e = sia::test::error_of([&] { load_text(dir, "[slurm]\ngres_types = [\"a100\"]\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("slurm.gres_types: expected a table of strings") != std::string::npos);
  e = sia::test::error_of([&] { load_text(dir, "[slurm]\ngrace_seconds = -1\n"); });
  CHECK(e.first == 78);
  CHECK(e.second.find("slurm.grace_seconds (") == 0);
}
