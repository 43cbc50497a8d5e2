// The CUDA plugin's element-wise kernels (everything else is cuBLAS): bias + optional ReLU,
// softmax cross-entropy with its gradient, and the ReLU mask of a back-propagated delta.
// Row-major layouts, as in MlpShape. Each launches on `stream` and returns at once.
// Thread-safety: stateless.
#pragma once

#include <cuda_runtime.h>

namespace sia::worker::cuda {

// z[i, m] += b[m]; then z = max(z, 0) when relu.
void bias_activation(float* z, const float* b, int n, int out, bool relu, cudaStream_t stream);
// loss[i] = -log softmax(logits[i])[y[i]]; dlogits = (softmax - onehot(y)) / n.
void softmax_xent(const float* logits, const int* y, int n, int k, float* dlogits, float* loss,
                  cudaStream_t stream);
// d[i] = 0 where a[i] <= 0 (a is the ReLU output the delta flows into).
void relu_mask(float* d, const float* a, long total, cudaStream_t stream);

}  // namespace sia::worker::cuda
