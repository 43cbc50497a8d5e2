#include "worker/cuda/kernels.hpp"

namespace sia::worker::cuda {

namespace {

constexpr int kThreads = 256;

int blocks(long total) {
  return static_cast<int>((total + kThreads - 1) / kThreads);
}

__global__ void bias_activation_kernel(float* z, const float* b, long total, int out, int relu) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  float v = z[i] + b[i % out];
  z[i] = relu ? fmaxf(v, 0.0f) : v;
}

__global__ void softmax_xent_kernel(const float* logits, const int* y, int n, int k, float* dlogits,
                                    float* loss) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* row = logits + static_cast<long>(i) * k;
  float mx = row[0];
  for (int m = 1; m < k; ++m) mx = fmaxf(mx, row[m]);
  float sum = 0;
  for (int m = 0; m < k; ++m) sum += expf(row[m] - mx);
  const float log_sum = logf(sum) + mx;
  loss[i] = log_sum - row[y[i]];
  float* d = dlogits + static_cast<long>(i) * k;
  for (int m = 0; m < k; ++m) d[m] = (expf(row[m] - log_sum) - (m == y[i] ? 1.0f : 0.0f)) / n;
}

__global__ void relu_mask_kernel(float* d, const float* a, long total) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < total && a[i] <= 0.0f) d[i] = 0.0f;
}

}  // namespace

void bias_activation(float* z, const float* b, int n, int out, bool relu, cudaStream_t s) {
  const long total = static_cast<long>(n) * out;
  bias_activation_kernel<<<blocks(total), kThreads, 0, s>>>(z, b, total, out, relu ? 1 : 0);
}

void softmax_xent(const float* logits, const int* y, int n, int k, float* dlogits, float* loss,
                  cudaStream_t s) {
  softmax_xent_kernel<<<blocks(n), kThreads, 0, s>>>(logits, y, n, k, dlogits, loss);
}

void relu_mask(float* d, const float* a, long total, cudaStream_t s) {
  relu_mask_kernel<<<blocks(total), kThreads, 0, s>>>(d, a, total);
}

}  // namespace sia::worker::cuda
