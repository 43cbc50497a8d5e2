#include "app/sia-run/agent_config.hpp"

namespace sia::ctl {

void apply_agent_config(channel::AgentArgs& args, const std::string& config_file,
                        const SettingFlags& flags) {
  ConfigSources sources;
  sources.config_file = config_file;
  sources.add_flags(flags);
  const AgentSettings agent = load_config(sources).agent;
  args.connect = agent.connect;
  args.node = agent.node;
  args.state_dir = agent.state_dir;
  args.server_key = agent.server_key;
  args.secret_key = agent.secret_key;
  args.controller_user = agent.controller_user;
}

}  // namespace sia::ctl
