// NodeBackend::read_log and SiaRunNode::read_log (node_backend.hpp, sia_run_node.hpp).
#include <algorithm>

#include "channel/node_backend.hpp"
#include "channel/sia_run_node.hpp"
#include "core/error.hpp"

namespace sia::channel {

nlohmann::json NodeBackend::read_log(const exec::LogRequest&) {
  throw Error(ExitStatus::unavailable, "this agent reads no logs");
}

nlohmann::json SiaRunNode::read_log(const exec::LogRequest& request) {
  exec::LogRequest r = request;
  r.limit = std::clamp<std::int64_t>(r.limit, 0, exec::kMaxLogRead);
  return exec::rank_log_data(state_, r);
}

}  // namespace sia::channel
