// SyntheticDataset: the reference worker's training data, generated from a seed (no
// downloads): `size` samples of `features` standard-normal inputs, labelled by a fixed random
// linear teacher (argmax over `classes`), with a fraction `label_noise` of labels replaced at
// random so that gradients stay noisy. The training stream visits the samples epoch after
// epoch, each epoch in its own seeded order; the k-th sample of the stream depends on
// (seed, k) only. An optimizer step that starts at stream position P takes samples
// [P, P + B): micro-step a of rank r the slice at P + (a * world + r) * local_bsz. The data
// position is therefore one integer that does not depend on the world size.
// Thread-safety: const members are safe to share; gather() caches orders (not thread-safe).
#pragma once

#include <cstdint>
#include <vector>

namespace sia::worker {

struct DatasetConfig {
  std::uint64_t seed = 1;
  int size = 16384;
  int features = 32;
  int classes = 10;
  double label_noise = 0.1;
};

class SyntheticDataset {
 public:
  explicit SyntheticDataset(const DatasetConfig& config);

  const DatasetConfig& config() const { return config_; }
  const float* features(int index) const {
    return &x_[static_cast<std::size_t>(index) * config_.features];
  }
  int label(int index) const { return y_[index]; }

  // The dataset index of stream position k.
  int stream_index(std::uint64_t k);
  // Copies stream samples [first, first + n) into x (n rows of `features`) and y.
  void gather(std::uint64_t first, int n, float* x, std::int32_t* y);

 private:
  const std::vector<int>& order(std::uint64_t epoch);

  DatasetConfig config_;
  std::vector<float> x_;
  std::vector<std::int32_t> y_;
  std::uint64_t cached_epoch_[2] = {~0ULL, ~0ULL};
  std::vector<int> cached_order_[2];
  int next_slot_ = 0;
};

// Stream position of micro-step `micro` of `rank` in the optimizer step starting at `samples`.
inline std::uint64_t micro_batch_start(std::uint64_t samples, int rank, int world, int local_bsz,
                                       int micro) {
  return samples +
         (static_cast<std::uint64_t>(micro) * world + rank) * static_cast<std::uint64_t>(local_bsz);
}

}  // namespace sia::worker
