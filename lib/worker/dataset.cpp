#include "worker/dataset.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "worker/rng.hpp"

namespace sia::worker {

SyntheticDataset::SyntheticDataset(const DatasetConfig& c) : config_(c) {
  if (c.size < 1 || c.features < 1 || c.classes < 2 || c.label_noise < 0 || c.label_noise > 1) {
    throw Error(ExitStatus::usage,
                "dataset: expected size >= 1, features >= 1, classes >= 2 "
                "and label_noise in [0, 1]");
  }
  const std::size_t d = static_cast<std::size_t>(c.features);
  const std::size_t k = static_cast<std::size_t>(c.classes);
  std::vector<double> teacher(d * k);
  Rng tr(hash64(c.seed, 0x7eac4e7));
  for (auto& w : teacher) w = tr.normal();
  x_.resize(static_cast<std::size_t>(c.size) * d);
  y_.resize(static_cast<std::size_t>(c.size));
  std::vector<double> score(k);
  for (int i = 0; i < c.size; ++i) {
    Rng r(hash64(c.seed, 0xda7a, static_cast<std::uint64_t>(i)));
    float* x = &x_[static_cast<std::size_t>(i) * d];
    for (std::size_t j = 0; j < d; ++j) x[j] = static_cast<float>(r.normal());
    std::fill(score.begin(), score.end(), 0.0);
    for (std::size_t j = 0; j < d; ++j) {
      for (std::size_t m = 0; m < k; ++m) score[m] += x[j] * teacher[j * k + m];
    }
    int label = static_cast<int>(std::max_element(score.begin(), score.end()) - score.begin());
    if (r.uniform() < c.label_noise) label = static_cast<int>(r.below(k));
    y_[static_cast<std::size_t>(i)] = label;
  }
}

const std::vector<int>& SyntheticDataset::order(std::uint64_t epoch) {
  for (int s = 0; s < 2; ++s) {
    if (cached_epoch_[s] == epoch) return cached_order_[s];
  }
  int s = next_slot_;
  next_slot_ ^= 1;
  std::vector<int>& o = cached_order_[s];
  o.resize(static_cast<std::size_t>(config_.size));
  std::iota(o.begin(), o.end(), 0);
  Rng r(hash64(config_.seed, 0x5bf1e, epoch));
  for (std::size_t i = o.size(); i > 1; --i) std::swap(o[i - 1], o[r.below(i)]);
  cached_epoch_[s] = epoch;
  return o;
}

int SyntheticDataset::stream_index(std::uint64_t k) {
  const std::uint64_t n = static_cast<std::uint64_t>(config_.size);
  return order(k / n)[k % n];
}

void SyntheticDataset::gather(std::uint64_t first, int n, float* x, std::int32_t* y) {
  const std::size_t d = static_cast<std::size_t>(config_.features);
  for (int i = 0; i < n; ++i) {
    int idx = stream_index(first + static_cast<std::uint64_t>(i));
    std::copy_n(features(idx), d, x + static_cast<std::size_t>(i) * d);
    y[i] = y_[static_cast<std::size_t>(idx)];
  }
}

}  // namespace sia::worker
