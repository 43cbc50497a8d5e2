#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "worker/dataset.hpp"

using namespace sia::worker;

TEST_CASE("the synthetic dataset is a function of its seed", "[worker][dataset]") {
  DatasetConfig c;
  c.size = 500;
  SyntheticDataset a(c), b(c);
  for (int i = 0; i < c.size; i += 37) {
    CHECK(a.label(i) == b.label(i));
    CHECK(std::equal(a.features(i), a.features(i) + c.features, b.features(i)));
  }
  c.seed = 2;
  SyntheticDataset other(c);
  CHECK_FALSE(std::equal(a.features(0), a.features(0) + c.features, other.features(0)));
  // Every class occurs.
  std::set<int> labels;
  for (int i = 0; i < 500; ++i) labels.insert(a.label(i));
  CHECK(labels.size() == static_cast<std::size_t>(c.classes));
}

TEST_CASE("each epoch visits every sample once, in its own order", "[worker][dataset]") {
  DatasetConfig c;
  c.size = 100;
  SyntheticDataset d(c);
  std::vector<int> e0, e1;
  for (std::uint64_t k = 0; k < 100; ++k) e0.push_back(d.stream_index(k));
  for (std::uint64_t k = 100; k < 200; ++k) e1.push_back(d.stream_index(k));
  CHECK(e0 != e1);
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  for (int i = 0; i < 100; ++i) {
    CHECK(e0[static_cast<std::size_t>(i)] == i);
    CHECK(e1[static_cast<std::size_t>(i)] == i);
  }
  // Going back to an earlier epoch gives the same order again.
  SyntheticDataset fresh(c);
  CHECK(fresh.stream_index(150) == d.stream_index(150));
  CHECK(fresh.stream_index(3) == d.stream_index(3));
}

TEST_CASE("a global batch is the same samples in every world size", "[worker][dataset]") {
  // Batch 24 from position 1000: 1 x 24, 2 ranks x 12, 3 ranks x 4 x 2 micro-steps.
  auto samples = [](int world, int local, int micro) {
    std::multiset<std::uint64_t> s;
    for (int r = 0; r < world; ++r) {
      for (int a = 0; a < micro; ++a) {
        std::uint64_t first = micro_batch_start(1000, r, world, local, a);
        for (int i = 0; i < local; ++i) s.insert(first + static_cast<std::uint64_t>(i));
      }
    }
    return s;
  };
  auto one = samples(1, 24, 1);
  CHECK(samples(2, 12, 1) == one);
  CHECK(samples(3, 4, 2) == one);
  CHECK(*one.begin() == 1000);
  CHECK(*one.rbegin() == 1023);
}
