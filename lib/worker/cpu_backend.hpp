// CpuBackend: the reference worker's replica on the CPU (one thread), synchronised through
// a Communicator (TcpComm among the local processes or across nodes). Its memory budget
// stands in for a device's: a micro-batch whose training_bytes exceed `memory_limit` bytes
// (0 = no limit) is refused with Error(71, kOutOfMemory) at construction, so live profiling
// finds the largest local batch a "device" holds.
// Thread-safety: one thread per backend.
#pragma once

#include <vector>

#include "worker/backend.hpp"
#include "worker/comm.hpp"
#include "worker/mlp.hpp"

namespace sia::worker {

class CpuBackend : public Backend {
 public:
  CpuBackend(const MlpShape& shape, Communicator& comm, int max_batch, double memory_limit);

  std::string describe() const override { return "cpu"; }
  void set_state(const ModelState& state) override;
  ModelState state() const override;
  MicroResult micro_step(const float* x, const std::int32_t* y, int n) override;
  void sync(double* scalars, std::size_t n) override;
  UpdateResult update(int count, double lr, double momentum, bool pair) override;

 private:
  MlpShape shape_;
  Communicator& comm_;
  MlpCpu mlp_;
  std::vector<float> params_, momentum_, grad_;
  std::vector<double> sum_;   // gradient sum, then scalars, for one all-reduce
  std::vector<double> prev_;  // the previous step's mean gradient (pair estimates)
};

}  // namespace sia::worker
