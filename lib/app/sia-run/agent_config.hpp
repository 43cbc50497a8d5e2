// The [agent] section of the configuration (sia-config(5)) as `sia-run agent` reads it:
// the settings no flag gave come from the configuration's layers (/etc/sia/config.toml <
// $XDG_CONFIG_HOME/sia/config.toml < --config FILE, else $SIA_CONFIG < SIA_AGENT_*, and
// SIA_STATE_DIR for the state directory); flags win.
// Errors: load_config's (66 a missing --config or $SIA_CONFIG file, 78 a bad file or
// environment variable).
// Thread-safety: reads the environment and files; no shared state.
#pragma once

#include <string>

#include "app/sia-run/agent_command.hpp"
#include "ctl/config.hpp"

namespace sia::ctl {

// Sets args.connect, node, state_dir, server_key and secret_key from the configuration,
// with `flags` (sia-run's, by key: "agent.connect" -> "tcp://ctl:7400") as its top
// layer; `config_file` is --config ("" for none).
void apply_agent_config(channel::AgentArgs& args, const std::string& config_file,
                        const SettingFlags& flags);

}  // namespace sia::ctl
