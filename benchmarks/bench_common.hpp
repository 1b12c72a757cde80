// Helpers the benchmarks share: medians, the order variants run in, argument parsing.
// Not part of the library (never installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace workpart_bench {

/// The median of v (0 when empty): figures are medians, never means, on a noisy machine.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// The order of the variants in timed round r: a balanced Latin square (Williams design), so
/// that over the rounds every variant runs right after every other one equally often and no
/// variant always follows the same one. (A plain rotation ABCD, BCDA, ... keeps the cyclic
/// neighbours: D would always precede A.)
inline std::vector<std::size_t> round_order(int r, std::size_t v) {
  std::vector<std::size_t> base(v);
  for (std::size_t x = 0, lo = 1, hi = v - 1; x < v; ++x)
    base[x] = x == 0 ? 0 : (x % 2 ? lo++ : hi--);
  const std::size_t k = std::size_t(r) % (2 * v);
  std::vector<std::size_t> order(v);
  for (std::size_t x = 0; x < v; ++x) order[x] = (base[x] + k) % v;
  if (k >= v) std::reverse(order.begin(), order.end());  // the mirror square (odd v needs it)
  return order;
}

/// The text after `key` when `arg` starts with it ("--reps=" of "--reps=5" gives "5"), else null.
inline const char* option_value(const std::string& arg, const char* key) {
  const std::size_t len = std::strlen(key);
  return arg.compare(0, len, key) == 0 ? arg.c_str() + len : nullptr;
}

/// A comma-separated list of positive sizes ("512,1024"); empty when any item is not positive
/// or the list holds none, so that the caller prints its usage.
inline std::vector<std::int64_t> parse_sizes(const std::string& list) {
  std::vector<std::int64_t> sizes;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    const std::size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    if (!item.empty()) {
      const long long n = std::atoll(item.c_str());
      if (n <= 0) return {};
      sizes.push_back(n);
    }
    pos = end + 1;
  }
  return sizes;
}

}  // namespace workpart_bench
