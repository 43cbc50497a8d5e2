// ClientBackend::logs and LocalBackend::logs (client_backend.hpp): through the [nodes] logs
// command, or from shared storage when the rounds run through Slurm.
#include "core/cluster.hpp"
#include "core/error.hpp"
#include "ctl/client_backend.hpp"
#include "ctl/command_driver.hpp"
#include "ctl/slurm_logs.hpp"

namespace sia::ctl {

nlohmann::json ClientBackend::logs(const LogQuery&) {
  throw Error(ExitStatus::unavailable, "this controller cannot hand out job logs");
}

nlohmann::json LocalBackend::logs(const LogQuery& query) {
  JobBook book = load_existing();
  if (config_.slurm.enabled) {  // on shared storage (slurm_logs.hpp)
    return slurm_job_log(book, pending_requests(store_), query, config_.slurm, store_.root());
  }
  RankLogSource source = locate_rank_log(book, pending_requests(store_), query);
  if (config_.controller.cluster.empty()) {
    throw Error(ExitStatus::config,
                "no cluster: give --cluster, or set controller.cluster or SIA_CLUSTER");
  }
  CommandDriver driver(read_cluster(config_.controller.cluster), config_.controller.cluster,
                       store_.root(), config_.nodes, nullptr);
  return job_log_document(query, source, driver.read_log(source.node, sia_run_log_args(query)));
}

}  // namespace sia::ctl
