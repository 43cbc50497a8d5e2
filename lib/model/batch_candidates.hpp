// The candidate batches GoodputFunction::optimize weighs on one (nodes, replicas), with
// their throughputs: everything of a candidate that does not depend on the gradient
// statistics (goodput.hpp gives the candidate rule). A job's gradient changes every epoch
// but its throughput model only on a refit, so optimize() rebuilds a table only when the
// model, the configuration or the limits change; the table holds the same numbers the
// candidates' direct evaluation gives, bit for bit, so using it changes no result.
// Thread-safety: candidate_table() memoises in a per-thread table (bounded: it is emptied
// when it reaches kMaxTables entries); the returned reference stays valid until the same
// thread's next call.
#pragma once

#include <cstddef>
#include <vector>

#include "model/goodput.hpp"
#include "model/perf_model.hpp"

namespace sia {

struct BatchCandidate {
  int local_bsz = 0;
  int accum_steps = 0;
  double batch_size = 0;  // replicas * local_bsz * (accum_steps + 1)
  double throughput = 0;  // samples/s
};

struct CandidateTable {
  BatchCandidate first;               // the first candidate, valid or not (Pollux's fallback)
  std::vector<BatchCandidate> valid;  // the candidates within [min_local, max_local], in order
};

inline constexpr std::size_t kMaxTables = 1 << 13;  // about 10 MB at most per thread

// The table for a data-parallel job (one stage) with these parameters and initial batch.
const CandidateTable& candidate_table(const PerfParams& params, double init_batch_size, int nodes,
                                      int replicas, const BatchLimits& limits);

}  // namespace sia
