#include "ctl/stop_first.hpp"

#include <algorithm>

namespace sia::ctl {

bool stop_first(const std::set<std::string>& running_on, const JobPlacement& to) {
  if (running_on.empty()) return false;
  std::set<std::string> nodes;
  for (const auto& ng : to.nodes) nodes.insert(ng.node);
  if (nodes != running_on) {
    // The same placement and attempt, running on some of its nodes only: the others' ranks
    // ended and wait for the job's next attempt, the rest go on -- no new generation.
    const bool waiting =
        std::includes(nodes.begin(), nodes.end(), running_on.begin(), running_on.end());
    return to.restart || !waiting;  // moved, grown or shrunk across nodes
  }
  // The same nodes: one node restarts its own ranks in order; several would each restart
  // theirs on their own.
  return to.restart && running_on.size() > 1;
}

}  // namespace sia::ctl
