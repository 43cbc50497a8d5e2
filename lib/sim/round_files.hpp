// `sia-ctl simulate --save-rounds DIR`: the cluster once (DIR/cluster.json), then every
// round's stage inputs and outputs as documents (DIR/rNNNNNN-jobs.json, -profiles, -goodput,
// -allocation, -placement) by the one writer of round documents
// (round/round_documents.hpp), so a round can be replayed through the programs by hand.
// Thread-safety: one thread.
#pragma once

#include <string>
#include <vector>

#include "core/allocation.hpp"
#include "core/cluster.hpp"
#include "core/goodput_matrix.hpp"
#include "core/placement.hpp"
#include "model/estimator.hpp"
#include "model/job_state.hpp"

namespace sia {

class RoundFiles {
 public:
  // Creates `dir` and writes the cluster (Error(cant_create) when it cannot).
  RoundFiles(std::string dir, const Cluster& cluster, std::string profile, std::string policy);
  void save(int round, double t, const std::vector<JobState*>& views, const Estimator& est,
            const GoodputMatrix& m, const Allocation& alloc, const Placement& placement) const;

 private:
  std::string dir_;
  const Cluster& cluster_;
  std::string profile_, policy_;
};

}  // namespace sia
