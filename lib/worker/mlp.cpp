#include "worker/mlp.hpp"

#include <algorithm>
#include <cmath>

#include "worker/rng.hpp"

namespace sia::worker {

std::vector<float> init_params(const MlpShape& s, std::uint64_t seed) {
  std::vector<float> p(s.param_count(), 0.0f);
  Rng r(hash64(seed, 0x1417));
  for (int l = 0; l < s.depth(); ++l) {
    const double sd = std::sqrt(2.0 / s.in(l));
    float* w = p.data() + s.weights_offset(l);
    const std::size_t n = static_cast<std::size_t>(s.in(l)) * s.out(l);
    for (std::size_t i = 0; i < n; ++i) w[i] = static_cast<float>(sd * r.normal());
  }
  return p;
}

std::size_t training_bytes(const MlpShape& s, int n) {
  const std::size_t p = s.param_count();
  const std::size_t per_sample = s.activations_per_sample() + 1;  // + the label
  return sizeof(float) * (5 * p + static_cast<std::size_t>(n) * per_sample);
}

double MlpCpu::forward(const float* params, const float* x, const std::int32_t* y, int n,
                       bool keep_dlogits) {
  const MlpShape& s = shape_;
  act_.resize(static_cast<std::size_t>(s.depth()) + 1);
  act_[0].assign(x, x + static_cast<std::size_t>(n) * s.features);
  for (int l = 0; l < s.depth(); ++l) {
    const int in = s.in(l), out = s.out(l);
    const float* w = params + s.weights_offset(l);
    const float* b = params + s.bias_offset(l);
    const std::vector<float>& a = act_[static_cast<std::size_t>(l)];
    std::vector<float>& z = act_[static_cast<std::size_t>(l) + 1];
    z.resize(static_cast<std::size_t>(n) * out);
    for (int i = 0; i < n; ++i) {
      float* zi = &z[static_cast<std::size_t>(i) * out];
      std::copy_n(b, out, zi);
      const float* ai = &a[static_cast<std::size_t>(i) * in];
      for (int j = 0; j < in; ++j) {
        const float aij = ai[j];
        if (aij == 0.0f) continue;
        const float* wj = w + static_cast<std::size_t>(j) * out;
        for (int m = 0; m < out; ++m) zi[m] += aij * wj[m];
      }
      if (l < s.layers) {
        for (int m = 0; m < out; ++m) zi[m] = std::max(zi[m], 0.0f);
      }
    }
  }
  // Softmax cross-entropy on the logits; delta_ = d(mean loss)/d(logits).
  const int k = s.classes;
  std::vector<float>& logits = act_.back();
  if (keep_dlogits) delta_.resize(static_cast<std::size_t>(n) * k);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    const float* zi = &logits[static_cast<std::size_t>(i) * k];
    const float mx = *std::max_element(zi, zi + k);
    double sum = 0;
    for (int m = 0; m < k; ++m) sum += std::exp(static_cast<double>(zi[m] - mx));
    const double log_sum = std::log(sum) + mx;
    total += log_sum - zi[y[i]];
    if (keep_dlogits) {
      float* di = &delta_[static_cast<std::size_t>(i) * k];
      for (int m = 0; m < k; ++m) {
        double p = std::exp(zi[m] - log_sum);
        di[m] = static_cast<float>((p - (m == y[i] ? 1.0 : 0.0)) / n);
      }
    }
  }
  return total / n;
}

double MlpCpu::loss(const float* params, const float* x, const std::int32_t* y, int n) {
  return forward(params, x, y, n, false);
}

double MlpCpu::loss_and_gradient(const float* params, const float* x, const std::int32_t* y, int n,
                                 float* grad) {
  const MlpShape& s = shape_;
  const double loss = forward(params, x, y, n, true);
  for (int l = s.depth() - 1; l >= 0; --l) {
    const int in = s.in(l), out = s.out(l);
    const float* w = params + s.weights_offset(l);
    float* gw = grad + s.weights_offset(l);
    float* gb = grad + s.bias_offset(l);
    const std::vector<float>& a = act_[static_cast<std::size_t>(l)];
    std::fill(gw, gw + static_cast<std::size_t>(in) * out, 0.0f);
    std::fill(gb, gb + out, 0.0f);
    for (int i = 0; i < n; ++i) {
      const float* di = &delta_[static_cast<std::size_t>(i) * out];
      const float* ai = &a[static_cast<std::size_t>(i) * in];
      for (int m = 0; m < out; ++m) gb[m] += di[m];
      for (int j = 0; j < in; ++j) {
        const float aij = ai[j];
        if (aij == 0.0f) continue;
        float* gwj = gw + static_cast<std::size_t>(j) * out;
        for (int m = 0; m < out; ++m) gwj[m] += aij * di[m];
      }
    }
    if (l == 0) break;
    // delta for the layer below: (delta W^T) masked by the ReLU of that layer's output.
    delta_prev_.assign(static_cast<std::size_t>(n) * in, 0.0f);
    for (int i = 0; i < n; ++i) {
      const float* di = &delta_[static_cast<std::size_t>(i) * out];
      const float* ai = &a[static_cast<std::size_t>(i) * in];
      float* pi = &delta_prev_[static_cast<std::size_t>(i) * in];
      for (int j = 0; j < in; ++j) {
        if (ai[j] <= 0.0f) continue;
        const float* wj = w + static_cast<std::size_t>(j) * out;
        float acc = 0;
        for (int m = 0; m < out; ++m) acc += wj[m] * di[m];
        pi[j] = acc;
      }
    }
    delta_.swap(delta_prev_);
  }
  return loss;
}

}  // namespace sia::worker
