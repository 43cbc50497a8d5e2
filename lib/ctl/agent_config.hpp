// The [agent] section of the configuration (sia-config(5)) as `sia-run agent` reads it:
// the settings no flag gave come from the configuration's layers (/etc/sia/config.toml <
// $XDG_CONFIG_HOME/sia/config.toml < --config FILE, else $SIA_CONFIG < SIA_AGENT_*, and
// SIA_STATE_DIR for the state directory); flags win.
// Errors: load_config's (66 a missing --config or $SIA_CONFIG file, 78 a bad file or
// environment variable).
// Thread-safety: reads the environment and files; no shared state.
#pragma once

#include <string>

#include "channel/agent_command.hpp"

namespace sia::ctl {

// Fills each of args.connect, node, state_dir, server_key and secret_key that is empty
// (no flag gave it) from the configuration; `config_file` is --config ("" for none).
void apply_agent_config(channel::AgentArgs& args, const std::string& config_file);

}  // namespace sia::ctl
