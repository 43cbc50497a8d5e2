// Backend: where a rank computes and synchronises one data-parallel replica of the model --
// the CPU (CpuBackend) or a CUDA device with NCCL (the optional plugin, cuda_plugin.hpp).
// Per optimizer step the trainer calls micro_step once per micro-batch (the backend keeps
// the sum of the micro-batch gradients), sync once (the sum across all ranks, together with
// a few scalars), then update (mean gradient, momentum SGD). The model state it exchanges
// with checkpoints is the flat parameter vector of MlpShape and the momentum buffer.
// Errors: Error(71, kOutOfMemory) when a micro-batch does not fit; Error(69) for a lost peer.
// Thread-safety: one thread per backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sia::worker {

struct ModelState {
  std::vector<float> params;
  std::vector<float> momentum;
};

struct MicroResult {
  double loss = 0;      // mean loss of the micro-batch
  double grad_sqr = 0;  // |g_i|^2 of this micro-batch's mean gradient
};

struct UpdateResult {
  double total_sqr = 0;  // |g|^2 of the step's mean gradient
  bool paired = false;   // a previous single gradient was kept (see update's `pair`)
  double prev_sqr = 0;   // |g_prev|^2
  double pair_sqr = 0;   // |(g + g_prev) / 2|^2
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string describe() const = 0;  // "cpu", "cuda:0 NVIDIA H100 80GB HBM3"
  virtual void set_state(const ModelState& state) = 0;
  virtual ModelState state() const = 0;
  // Adds the mean gradient of n samples (x: n rows; y: labels) to the step's sum.
  virtual MicroResult micro_step(const float* x, const std::int32_t* y, int n) = 0;
  // Sums the gradient sum and `scalars` over all ranks (every rank gets the totals).
  virtual void sync(double* scalars, std::size_t n) = 0;
  // g = gradient sum / count; v = momentum * v + g; params -= lr * v; clears the sum.
  // With `pair`, keeps g for the next step's pair estimate and returns the pair figures
  // when a previous g was kept; without, forgets any kept g.
  virtual UpdateResult update(int count, double lr, double momentum, bool pair) = 0;
};

}  // namespace sia::worker
