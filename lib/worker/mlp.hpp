// The reference worker's model: a multi-layer perceptron (ReLU hidden layers, softmax
// cross-entropy; with no hidden layer, multinomial logistic regression). MlpShape fixes the
// flat parameter layout every backend shares -- for each layer l, its weights W_l (row-major,
// in x out) then its bias b_l (out) -- and is header-only so the optional CUDA plugin uses it
// without linking libsia. MlpCpu computes a micro-batch's mean loss and gradient on the CPU.
// Thread-safety: MlpShape is a value; an MlpCpu holds scratch buffers (one per thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sia::worker {

struct MlpShape {
  int features = 32;
  int hidden = 64;
  int layers = 2;  // hidden layers
  int classes = 10;

  int depth() const { return layers + 1; }  // weight layers
  int in(int l) const { return l == 0 ? features : hidden; }
  int out(int l) const { return l == layers ? classes : hidden; }
  std::size_t weights_offset(int l) const {
    std::size_t off = 0;
    for (int i = 0; i < l; ++i) off += static_cast<std::size_t>(in(i) + 1) * out(i);
    return off;
  }
  std::size_t bias_offset(int l) const {
    return weights_offset(l) + static_cast<std::size_t>(in(l)) * out(l);
  }
  std::size_t param_count() const { return weights_offset(depth()); }
  // Activation values one sample needs in a forward + backward pass.
  std::size_t activations_per_sample() const {
    std::size_t a = static_cast<std::size_t>(features);
    for (int l = 0; l < depth(); ++l) a += 3 * static_cast<std::size_t>(out(l));
    return a;
  }
  bool operator==(const MlpShape&) const = default;
};

// He-initialised weights, zero biases, from `seed`.
std::vector<float> init_params(const MlpShape& shape, std::uint64_t seed);

// Bytes a backend holds for a micro-batch of n: parameters, momentum, the micro-batch and
// accumulated gradients, the previous gradient, and activations.
std::size_t training_bytes(const MlpShape& shape, int n);

class MlpCpu {
 public:
  explicit MlpCpu(const MlpShape& shape) : shape_(shape) {}
  // Mean cross-entropy of the n samples (x: n rows of features; y: labels) and its gradient
  // with respect to `params`, written to `grad` (param_count() floats).
  double loss_and_gradient(const float* params, const float* x, const std::int32_t* y, int n,
                           float* grad);
  // Mean cross-entropy only.
  double loss(const float* params, const float* x, const std::int32_t* y, int n);

 private:
  double forward(const float* params, const float* x, const std::int32_t* y, int n,
                 bool keep_dlogits);

  MlpShape shape_;
  std::vector<std::vector<float>> act_;  // act_[0] = input, act_[l + 1] = layer l output
  std::vector<float> delta_, delta_prev_;
};

}  // namespace sia::worker
