#include "worker/cpu_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "worker/exit_codes.hpp"

namespace sia::worker {

CpuBackend::CpuBackend(const MlpShape& shape, Communicator& comm, int max_batch,
                       double memory_limit)
    : shape_(shape), comm_(comm), mlp_(shape) {
  const std::size_t need = training_bytes(shape, max_batch);
  if (memory_limit > 0 && static_cast<double>(need) > memory_limit) {
    auto mib = [](double b) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", b / 1048576);
      return std::string(buf);
    };
    throw Error(kOutOfMemory, "out of memory: a micro-batch of " + std::to_string(max_batch) +
                                  " needs " + mib(static_cast<double>(need)) +
                                  " MiB, the memory limit is " + mib(memory_limit) + " MiB");
  }
  const std::size_t p = shape.param_count();
  params_.assign(p, 0.0f);
  momentum_.assign(p, 0.0f);
  grad_.assign(p, 0.0f);
  sum_.assign(p, 0.0);
}

void CpuBackend::set_state(const ModelState& s) {
  if (s.params.size() != params_.size() || s.momentum.size() != momentum_.size()) {
    throw Error(ExitStatus::software, "model state of the wrong size");
  }
  params_ = s.params;
  momentum_ = s.momentum;
}

ModelState CpuBackend::state() const {
  return {params_, momentum_};
}

MicroResult CpuBackend::micro_step(const float* x, const std::int32_t* y, int n) {
  MicroResult r;
  r.loss = mlp_.loss_and_gradient(params_.data(), x, y, n, grad_.data());
  const std::size_t p = params_.size();
  double sqr = 0;
  for (std::size_t i = 0; i < p; ++i) {
    const double g = grad_[i];
    sqr += g * g;
    sum_[i] += g;
  }
  r.grad_sqr = sqr;
  return r;
}

void CpuBackend::sync(double* scalars, std::size_t n) {
  const std::size_t p = params_.size();
  sum_.resize(p + n);
  std::copy_n(scalars, n, sum_.begin() + static_cast<std::ptrdiff_t>(p));
  comm_.allreduce_sum(sum_.data(), sum_.size());
  std::copy_n(sum_.begin() + static_cast<std::ptrdiff_t>(p), n, scalars);
  sum_.resize(p);
}

UpdateResult CpuBackend::update(int count, double lr, double momentum, bool pair) {
  UpdateResult r;
  const std::size_t p = params_.size();
  const double inv = 1.0 / count;
  for (std::size_t i = 0; i < p; ++i) sum_[i] *= inv;
  for (std::size_t i = 0; i < p; ++i) r.total_sqr += sum_[i] * sum_[i];
  if (pair && prev_.size() == p) {
    r.paired = true;
    for (std::size_t i = 0; i < p; ++i) {
      const double m = 0.5 * (sum_[i] + prev_[i]);
      r.prev_sqr += prev_[i] * prev_[i];
      r.pair_sqr += m * m;
    }
  }
  if (pair) {
    prev_ = sum_;
  } else {
    prev_.clear();
  }
  for (std::size_t i = 0; i < p; ++i) {
    const double v = momentum * momentum_[i] + sum_[i];
    momentum_[i] = static_cast<float>(v);
    params_[i] = static_cast<float>(params_[i] - lr * v);
  }
  std::fill(sum_.begin(), sum_.end(), 0.0);
  return r;
}

}  // namespace sia::worker
