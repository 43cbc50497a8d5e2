#include "ctl/round_outage.hpp"

#include <set>

namespace sia::ctl {

RoundOutage round_outage(const nlohmann::json& nodes, std::size_t cluster_nodes) {
  bool any_up = false;
  std::set<std::string> reasons;
  for (const auto& n : nodes) {
    any_up = any_up || n.value("up", false);
    reasons.insert(n.value("error", ""));
  }
  RoundOutage o;
  o.outage = !any_up && cluster_nodes > 0;
  if (o.outage && reasons.size() == 1) o.reason = *reasons.begin();
  return o;
}

bool said_by(const RoundOutage& outage, const std::string& warning) {
  return !outage.reason.empty() && warning.rfind("node ", 0) == 0 &&
         warning.ends_with(" is down: " + outage.reason);
}

std::string outage_line(const RoundOutage& outage) {
  return "no node answered" +
         (outage.reason.empty() ? std::string(" (see the node errors above)")
                                : ": " + outage.reason) +
         "; the round placed nothing";
}

}  // namespace sia::ctl
