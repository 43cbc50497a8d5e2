#include "ctl/stop_first.hpp"

namespace sia::ctl {

bool stop_first(const std::set<std::string>& running_on, const JobPlacement& to) {
  if (running_on.empty()) return false;
  std::set<std::string> nodes;
  for (const auto& ng : to.nodes) nodes.insert(ng.node);
  if (nodes != running_on) return true;  // moved, grown or shrunk across nodes
  // The same nodes: one node restarts its own ranks in order; several would each restart
  // theirs on their own.
  return to.restart && running_on.size() > 1;
}

}  // namespace sia::ctl
