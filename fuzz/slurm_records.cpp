// What Slurm prints (lib/slurm): the input read as `scontrol -d -o show node` and as
// `scontrol -d -o show job` output, then the cluster and the usable GPUs made of them
// (a catalog of a100 and t4, l40s mapped to a100; every marked job recorded as sia's), as
// `sia-ctl slurm-cluster` does; as `sacct` output (the figures of `sia-ctl history`); the
// input's first line also as a hostlist, a GRES list, sacct's Elapsed and sia's job mark.
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster.hpp"
#include "fuzz_input.hpp"
#include "slurm/job_mark.hpp"
#include "slurm/slurm_accounting.hpp"
#include "slurm/slurm_cluster.hpp"

using namespace sia;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(fuzz::text(data, size));
  const std::string line = text.substr(0, text.find('\n'));
  fuzz::run([&] { slurm::expand_hostlist(line); });
  fuzz::run([&] { slurm::parse_gpu_gres(line, "fuzz"); });
  fuzz::run([&] {
    if (slurm::parse_elapsed(line, "fuzz") < 0) std::abort();
  });
  fuzz::run([&] {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [id, j] : slurm::parse_sacct(text)) {
      if (id <= 0 || j.elapsed < 0) std::abort();
      out.push_back({id, j.state, j.elapsed, j.exit_code, j.exit_signal});
    }
    out.dump();
  });
  fuzz::run([&] {
    if (auto m = slurm::parse_mark_comment(line)) {
      if (slurm::parse_mark_comment(slurm::mark_comment(*m)) != m) std::abort();
    }
  });
  slurm::SlurmSettings settings;
  settings.gres_types = {{"l40s", "a100"}};
  std::vector<slurm::SlurmNode> nodes;
  fuzz::run([&] {
    nodes = slurm::parse_nodes(text);
    cluster_to_json(slurm::cluster_from_slurm(nodes, settings, {"a100", "t4"}, "fuzz")).dump();
  });
  return fuzz::run([&] {
    auto jobs = slurm::parse_jobs(text);
    // sia's: every marked job, as if recorded with its own uid and id.
    std::vector<slurm::OwnedJob> owned;
    for (const auto& j : jobs) {
      auto mark = slurm::parse_mark_comment(j.comment);
      if (!mark) continue;
      owned.push_back({*mark, j.user_id, std::atol(j.id.c_str())});
      if (!slurm::owns(owned.back(), j) && j.het_job_id.empty() && owned.back().slurm_id > 0 &&
          std::to_string(owned.back().slurm_id) == j.id)
        std::abort();  // a job recorded exactly as it is listed must be sia's
    }
    nlohmann::json(slurm::usable_gpus(nodes, jobs, settings, owned)).dump();
  });
}
