// The CUDA + NCCL Backend, built into the plugin libsia_worker_cuda.so (see
// worker/cuda_plugin.hpp for the ABI). The MLP runs with cuBLAS GEMMs and three tiny kernels
// (kernels.cu) on one device per rank; gradients and the step's scalars are summed with
// ncclAllReduce over a communicator whose ncclUniqueId rank 0 broadcasts on the worker's
// rendezvous channel. Device memory is allocated once for the largest micro-batch, so a
// batch that does not fit fails at start with status 71.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "worker/cuda/kernels.hpp"
#include "worker/cuda_plugin.hpp"
#include "worker/exit_codes.hpp"

namespace sia::worker::cuda {

namespace {

[[noreturn]] void fail_cuda(cudaError_t e, const char* what) {
  if (e == cudaErrorMemoryAllocation) {
    throw Error(kOutOfMemory, std::string("out of device memory: ") + what);
  }
  throw Error(ExitStatus::unavailable, std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail_cuda(e, what);
}

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  if (s == CUBLAS_STATUS_ALLOC_FAILED) {
    throw Error(kOutOfMemory, std::string("out of device memory: ") + what);
  }
  throw Error(ExitStatus::unavailable,
              std::string("cuBLAS: ") + what + ": status " + std::to_string(static_cast<int>(s)));
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    throw Error(ExitStatus::unavailable,
                std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
  }
}

#define SIA_CHECK(call) check((call), #call)

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  ~DeviceArray() {
    if (p_) cudaFree(p_);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  void allocate(std::size_t n) {
    SIA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)));
    n_ = n;
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

class CudaBackend : public Backend {
 public:
  CudaBackend(const CudaBackendConfig& c, Communicator& comm) : s_(c.shape), max_n_(c.max_batch) {
    // Set up the device, then agree with the other ranks before NCCL, whose initialisation
    // would wait for a rank that has given up.
    std::optional<Error> error;
    try {
      open_device(c);
      allocate();
    } catch (const Error& e) {
      error = e;
    }
    double failed = error ? 1 : 0;
    comm.allreduce_sum(&failed, 1);
    if (error) throw *error;
    if (failed > 0) {
      throw Error(kOutOfMemory, "another rank could not set up its device");
    }
    // NCCL: rank 0's unique id over the rendezvous channel.
    ncclUniqueId id{};
    std::string blob;
    if (comm.rank() == 0) {
      SIA_CHECK(ncclGetUniqueId(&id));
      blob.assign(reinterpret_cast<const char*>(&id), sizeof id);
    }
    comm.broadcast(blob);
    if (blob.size() != sizeof id) throw Error(ExitStatus::software, "NCCL id of the wrong size");
    std::memcpy(&id, blob.data(), sizeof id);
    SIA_CHECK(ncclCommInitRank(&nccl_, comm.size(), id, comm.rank()));
  }

  void open_device(const CudaBackendConfig& c) {
    int count = 0;
    SIA_CHECK(cudaGetDeviceCount(&count));
    if (count <= 0) throw Error(ExitStatus::unavailable, "no CUDA device is visible");
    device_ = count == 1 ? 0 : c.local_world_size <= count ? c.local_rank : c.local_rank % count;
    SIA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp prop{};
    SIA_CHECK(cudaGetDeviceProperties(&prop, device_));
    name_ = "cuda:" + std::to_string(device_) + " " + prop.name;
    SIA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    p_ = s_.param_count();
  }

  void allocate() {
    SIA_CHECK(cublasCreate(&blas_));
    SIA_CHECK(cublasSetStream(blas_, stream_));
    const std::size_t n = static_cast<std::size_t>(max_n_);
    int widest = s_.features;
    for (int l = 0; l < s_.depth(); ++l) widest = std::max(widest, s_.out(l));
    for (auto* a : {&params_, &momentum_, &grad_, &sum_, &prev_, &tmp_}) a->allocate(p_);
    x_.allocate(n * s_.features);
    y_.allocate(n);
    loss_.allocate(n);
    ones_.allocate(n);
    delta_.allocate(n * widest);
    delta_prev_.allocate(n * widest);
    scalars_.allocate(16);
    act_ = std::vector<DeviceArray<float>>(static_cast<std::size_t>(s_.depth()) + 1);
    for (int l = 0; l < s_.depth(); ++l)
      act_[static_cast<std::size_t>(l) + 1].allocate(n * s_.out(l));
    std::vector<float> ones(n, 1.0f);
    SIA_CHECK(cudaMemcpy(ones_.get(), ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    SIA_CHECK(cudaMemset(sum_.get(), 0, p_ * sizeof(float)));
    SIA_CHECK(cudaDeviceSynchronize());  // the legacy stream's copies before stream_ runs
  }

  ~CudaBackend() override {
    if (nccl_) ncclCommDestroy(nccl_);
    if (blas_) cublasDestroy(blas_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  std::string describe() const override { return name_; }

  void set_state(const ModelState& s) override {
    if (s.params.size() != p_ || s.momentum.size() != p_) {
      throw Error(ExitStatus::software, "model state of the wrong size");
    }
    // On stream_ (non-blocking: the legacy stream does not order with it), then wait, as
    // copies from pageable memory may still be in flight when the call returns.
    SIA_CHECK(cudaMemcpyAsync(params_.get(), s.params.data(), p_ * sizeof(float),
                              cudaMemcpyHostToDevice, stream_));
    SIA_CHECK(cudaMemcpyAsync(momentum_.get(), s.momentum.data(), p_ * sizeof(float),
                              cudaMemcpyHostToDevice, stream_));
    SIA_CHECK(cudaStreamSynchronize(stream_));
  }

  ModelState state() const override {
    ModelState s;
    s.params.resize(p_);
    s.momentum.resize(p_);
    SIA_CHECK(cudaMemcpyAsync(s.params.data(), params_.get(), p_ * sizeof(float),
                              cudaMemcpyDeviceToHost, stream_));
    SIA_CHECK(cudaMemcpyAsync(s.momentum.data(), momentum_.get(), p_ * sizeof(float),
                              cudaMemcpyDeviceToHost, stream_));
    SIA_CHECK(cudaStreamSynchronize(stream_));
    return s;
  }

  MicroResult micro_step(const float* x, const std::int32_t* y, int n) override {
    if (n > max_n_) throw Error(ExitStatus::software, "micro-batch larger than allocated");
    const float one = 1.0f, zero = 0.0f;
    SIA_CHECK(cudaMemcpyAsync(x_.get(), x, sizeof(float) * n * s_.features, cudaMemcpyHostToDevice,
                              stream_));
    SIA_CHECK(cudaMemcpyAsync(y_.get(), y, sizeof(int) * n, cudaMemcpyHostToDevice, stream_));
    const float* a = x_.get();
    for (int l = 0; l < s_.depth(); ++l) {
      const int in = s_.in(l), out = s_.out(l);
      float* z = act_[static_cast<std::size_t>(l) + 1].get();
      // Column-major view: z^T (out x n) = W^T (out x in) * a^T (in x n).
      SIA_CHECK(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_N, out, n, in, &one,
                            params_.get() + s_.weights_offset(l), out, a, in, &zero, z, out));
      bias_activation(z, params_.get() + s_.bias_offset(l), n, out, l < s_.layers, stream_);
      a = z;
    }
    float* d = delta_.get();
    float* d_prev = delta_prev_.get();
    softmax_xent(a, y_.get(), n, s_.classes, d, loss_.get(), stream_);
    for (int l = s_.depth() - 1; l >= 0; --l) {
      const int in = s_.in(l), out = s_.out(l);
      const float* a_in = l == 0 ? x_.get() : act_[static_cast<std::size_t>(l)].get();
      // dW^T (out x in) = d^T (out x n) * a_in (n x in); db = d^T * 1.
      SIA_CHECK(cublasSgemm(blas_, CUBLAS_OP_N, CUBLAS_OP_T, out, in, n, &one, d, out, a_in, in,
                            &zero, grad_.get() + s_.weights_offset(l), out));
      SIA_CHECK(cublasSgemv(blas_, CUBLAS_OP_N, out, n, &one, d, out, ones_.get(), 1, &zero,
                            grad_.get() + s_.bias_offset(l), 1));
      if (l == 0) break;
      // d_prev^T (in x n) = W (in x out) * d^T (out x n), masked by the ReLU below.
      SIA_CHECK(cublasSgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, in, n, out, &one,
                            params_.get() + s_.weights_offset(l), out, d, out, &zero, d_prev, in));
      relu_mask(d_prev, a_in, static_cast<long>(n) * in, stream_);
      std::swap(d, d_prev);
    }
    SIA_CHECK(cudaGetLastError());
    float loss_sum = 0, norm = 0;
    SIA_CHECK(cublasSasum(blas_, n, loss_.get(), 1, &loss_sum));
    SIA_CHECK(cublasSnrm2(blas_, static_cast<int>(p_), grad_.get(), 1, &norm));
    SIA_CHECK(cublasSaxpy(blas_, static_cast<int>(p_), &one, grad_.get(), 1, sum_.get(), 1));
    return {static_cast<double>(loss_sum) / n, static_cast<double>(norm) * norm};
  }

  void sync(double* scalars, std::size_t n) override {
    if (n > scalars_.size()) throw Error(ExitStatus::software, "too many scalars");
    SIA_CHECK(cudaMemcpyAsync(scalars_.get(), scalars, n * sizeof(double), cudaMemcpyHostToDevice,
                              stream_));
    SIA_CHECK(ncclGroupStart());
    SIA_CHECK(ncclAllReduce(sum_.get(), sum_.get(), p_, ncclFloat, ncclSum, nccl_, stream_));
    SIA_CHECK(
        ncclAllReduce(scalars_.get(), scalars_.get(), n, ncclDouble, ncclSum, nccl_, stream_));
    SIA_CHECK(ncclGroupEnd());
    SIA_CHECK(cudaMemcpyAsync(scalars, scalars_.get(), n * sizeof(double), cudaMemcpyDeviceToHost,
                              stream_));
    SIA_CHECK(cudaStreamSynchronize(stream_));
  }

  UpdateResult update(int count, double lr, double momentum, bool pair) override {
    UpdateResult r;
    const int p = static_cast<int>(p_);
    const float inv = 1.0f / static_cast<float>(count), one = 1.0f, half = 0.5f;
    const float mom = static_cast<float>(momentum), step = static_cast<float>(-lr);
    float norm = 0;
    SIA_CHECK(cublasSscal(blas_, p, &inv, sum_.get(), 1));
    SIA_CHECK(cublasSnrm2(blas_, p, sum_.get(), 1, &norm));
    r.total_sqr = static_cast<double>(norm) * norm;
    if (pair && have_prev_) {
      r.paired = true;
      SIA_CHECK(cublasSnrm2(blas_, p, prev_.get(), 1, &norm));
      r.prev_sqr = static_cast<double>(norm) * norm;
      SIA_CHECK(cudaMemcpyAsync(tmp_.get(), sum_.get(), p_ * sizeof(float),
                                cudaMemcpyDeviceToDevice, stream_));
      SIA_CHECK(cublasSaxpy(blas_, p, &one, prev_.get(), 1, tmp_.get(), 1));
      SIA_CHECK(cublasSscal(blas_, p, &half, tmp_.get(), 1));
      SIA_CHECK(cublasSnrm2(blas_, p, tmp_.get(), 1, &norm));
      r.pair_sqr = static_cast<double>(norm) * norm;
    }
    if (pair) {
      SIA_CHECK(cudaMemcpyAsync(prev_.get(), sum_.get(), p_ * sizeof(float),
                                cudaMemcpyDeviceToDevice, stream_));
    }
    have_prev_ = pair;
    SIA_CHECK(cublasSscal(blas_, p, &mom, momentum_.get(), 1));
    SIA_CHECK(cublasSaxpy(blas_, p, &one, sum_.get(), 1, momentum_.get(), 1));
    SIA_CHECK(cublasSaxpy(blas_, p, &step, momentum_.get(), 1, params_.get(), 1));
    SIA_CHECK(cudaMemsetAsync(sum_.get(), 0, p_ * sizeof(float), stream_));
    return r;
  }

 private:
  MlpShape s_;
  int max_n_;
  int device_ = 0;
  std::string name_;
  std::size_t p_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  ncclComm_t nccl_ = nullptr;
  DeviceArray<float> params_, momentum_, grad_, sum_, prev_, tmp_, x_, loss_, ones_;
  DeviceArray<float> delta_, delta_prev_;
  DeviceArray<int> y_;
  DeviceArray<double> scalars_;
  std::vector<DeviceArray<float>> act_;
  bool have_prev_ = false;
};

}  // namespace

}  // namespace sia::worker::cuda

extern "C" __attribute__((visibility("default"))) int sia_worker_cuda_device_count_v1(
    char* why, std::size_t why_len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why && why_len) {
      std::snprintf(why, why_len, "cudaGetDeviceCount: %s (error %d)", cudaGetErrorString(e),
                    static_cast<int>(e));
    }
    return -1;
  }
  return n;
}

extern "C" __attribute__((visibility("default"))) sia::worker::Backend* sia_worker_cuda_create_v1(
    const sia::worker::CudaBackendConfig* config, sia::worker::Communicator* comm) {
  return new sia::worker::cuda::CudaBackend(*config, *comm);
}
