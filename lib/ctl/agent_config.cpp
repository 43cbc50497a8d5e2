#include "ctl/agent_config.hpp"

#include "ctl/config.hpp"

namespace sia::ctl {

void apply_agent_config(channel::AgentArgs& args, const std::string& config_file) {
  ConfigSources sources;
  sources.config_file = config_file;
  const AgentSettings agent = load_config(sources).agent;
  auto fill = [](std::string& field, const std::string& configured) {
    if (field.empty()) field = configured;
  };
  fill(args.connect, agent.connect);
  fill(args.node, agent.node);
  fill(args.state_dir, agent.state_dir);
  fill(args.server_key, agent.server_key);
  fill(args.secret_key, agent.secret_key);
}

}  // namespace sia::ctl
