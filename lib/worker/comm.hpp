// Communicator: the collective operations data-parallel training needs among the ranks of
// one job -- an element-wise sum every rank receives (all-reduce) and a broadcast of rank
// 0's bytes. Sums are deterministic: added in rank order, in double precision.
// A lost or silent peer fails the call with Error(69, kPeerLost).
// Thread-safety: one thread per communicator; all ranks must call the same operations in
// the same order with the same sizes.
#pragma once

#include <cstddef>
#include <string>

namespace sia::worker {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void allreduce_sum(double* data, std::size_t n) = 0;
  virtual void allreduce_sum(float* data, std::size_t n) = 0;
  // Rank 0's `bytes` replace every other rank's.
  virtual void broadcast(std::string& bytes) = 0;
};

}  // namespace sia::worker
