// Counter-based random numbers: SplitMix64's finaliser (Steele et al., OOPSLA '14) as a
// hash of a seed and counters, so that a sampled value is a pure function of (seed,
// index) -- the same on every machine and in every order of evaluation.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

namespace sia {

inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A hash of a seed and up to two counters.
inline std::uint64_t hash64(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return mix64(mix64(mix64(seed + 0x9e3779b97f4a7c15ULL) ^ a) + b * 0x9e3779b97f4a7c15ULL);
}

// A uniform number in [0, 1) from a hash.
inline double unit_interval(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace sia
