// Deterministic random numbers for the reference worker: SplitMix64 (Steele et al.), used
// both as a stream (weights, permutations) and as a counter-based hash, so that a sample
// or a weight is a pure function of (seed, index) -- the same on every rank, in every
// world size, after every restart.
// Thread-safety: a Rng is a plain value; the free functions are pure.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hash64.hpp"

namespace sia::worker {

using sia::hash64;
using sia::mix64;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  double uniform() { return unit_interval(next()); }           // [0, 1)
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // n > 0; bias < 2^-40
  double normal() {  // Box-Muller; one of the pair is dropped for simplicity
    double u1 = uniform();
    double u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace sia::worker
