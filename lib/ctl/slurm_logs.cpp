#include "ctl/slurm_logs.hpp"

#include "core/error.hpp"
#include "ctl/slurm_generations.hpp"
#include "exec/rank_log.hpp"

namespace sia::ctl {

using nlohmann::json;

json slurm_job_log(const JobBook& book, const std::vector<PendingRequest>& pending,
                   const LogQuery& q, const slurm::SlurmSettings& settings,
                   const std::string& state_dir) {
  const RankLogSource source = locate_rank_log(book, pending, q, true);
  const auto gens = read_slurm_generations(state_dir, q.job);
  if (gens.empty()) {
    throw Error(ExitStatus::no_input, "job \"" + q.job + "\" has no Slurm job recorded yet (" +
                                          state_dir + "/slurm/generations/" + q.job +
                                          ".json): no log yet");
  }
  const SlurmGeneration& last = gens.back();
  exec::LogRequest r;
  r.job = q.job;
  r.rank = q.rank;
  r.tail = q.tail;
  r.offset = q.offset;
  json d = exec::rank_log_data(exec::StateDir(settings.shared_dir + "/nodes/" + last.node), r);
  d["state"] = nullptr;
  json doc = job_log_document(q, source, d);
  doc["data"]["slurm_job"] = last.slurm_job;
  doc["data"]["slurm_output"] =
      settings.shared_dir + "/slurm/" + q.job + "/slurm-" + std::to_string(last.slurm_job) + ".out";
  if (source.node_down) {
    doc["data"]["note"] = "the last round found " + source.node + " down" +
                          (source.down_reason.empty() ? "" : " (" + source.down_reason + ")") +
                          ": Slurm was not asked; read from shared storage";
  }
  return doc;
}

}  // namespace sia::ctl
