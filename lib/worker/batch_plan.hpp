// BatchPlanWatcher: how a running worker learns that its batch changed without a restart.
// When only a job's batch settings change, sia-run rewrites the file SIA_BATCH_PLAN names
// (atomically) with one JSON object:
//   {"type": "batch_plan", "job": "j1", "round": 7, "plan": 2,
//    "batch_size": 96, "local_bsz": 16, "accum_steps": 2}
// `plan` counts the changes within generation `round` (SIA_ROUND). Rank 0 polls at step
// boundaries; poll() stats the file and reads it only when it changed, and returns a plan
// newer than the last one it returned that belongs to this round and whose numbers keep
// batch_size = local_bsz x world_size x (accum_steps + 1). A missing, partial or
// malformed file, or a plan for another round, is no plan (the contract is in
// man/sia-worker.7, "Batch plans").
// Thread-safety: one thread per watcher.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/batch_setting.hpp"

namespace sia::worker {

struct BatchPlan {
  int plan = 0;
  BatchSetting batch;  // holds batch_size = local_bsz x world_size x (accum_steps + 1)
};

// Parses one plan file's text; nullopt unless it is a complete, consistent plan of `round`
// for `world_size` ranks. `warn` hears why a well-formed plan was refused.
std::optional<BatchPlan> parse_batch_plan(const std::string& text, long round, int world_size,
                                          const std::function<void(const std::string&)>& warn);

class BatchPlanWatcher {
 public:
  // `path` "" watches nothing.
  BatchPlanWatcher(std::string path, long round, int world_size,
                   std::function<void(const std::string&)> warn);
  std::optional<BatchPlan> poll();
  int applied() const { return applied_; }
  void set_applied(int plan) { applied_ = plan; }

 private:
  std::string path_;
  long round_;
  int world_size_;
  std::function<void(const std::string&)> warn_;
  int applied_ = 0;
  std::uint64_t seen_ino_ = 0;
  std::int64_t seen_mtime_ns_ = -1;
  std::int64_t seen_size_ = -1;
};

}  // namespace sia::worker
