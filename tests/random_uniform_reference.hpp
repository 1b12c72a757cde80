#pragma once
// wp::random_uniform as documented (include/workpart/expr/ops.hpp), written out again for the
// tests' plain-loop references: splitmix64's output function, hash(a, b) = mix(mix(a) + b) >> 1,
// the hash's top 53 bits as a double; and the seed wp::nn::dropout takes from a layer's name
// (FNV-1a, halved).

#include <cstdint>
#include <string>

namespace ref {
inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline std::int64_t hash(std::int64_t a, std::int64_t b) {
  return std::int64_t(mix(mix(std::uint64_t(a)) + std::uint64_t(b)) >> 1);
}
inline double uniform(std::int64_t h) { return double(std::uint64_t(h) >> 10) * 0x1.0p-53; }
inline std::int64_t name_seed(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return std::int64_t(h >> 1);
}
}  // namespace ref
