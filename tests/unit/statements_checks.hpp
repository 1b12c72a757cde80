#pragma once
// What tests/unit/test_statements*.cpp share: filling arrays with distinct values and
// comparing them with loops' results.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <workpart/workpart.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace wp = workpart;
using std::int32_t;
using std::int64_t;

namespace {

// Distinct values with mixed signs (fractions for floating types).
template <class T>
T value_at(int64_t k, int64_t salt = 0) {
  const double v = double((k * 7 + salt * 3) % 19 - 9);
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(v * 0.625);
  else
    return static_cast<T>(v);
}

template <class T, int N>
std::vector<T> fill(wp::array<T, N>& a, int64_t salt = 0) {
  for (int64_t k = 0; k < a.size(); ++k) a.data()[k] = value_at<T>(k, salt);
  return std::vector<T>(a.data(), a.data() + a.size());
}

template <class T>
void require_close(T got, double expect, int64_t at) {
  INFO("element " << at);
  if constexpr (std::is_floating_point_v<T>) {
    const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    REQUIRE(double(got) == Approx(expect).epsilon(eps).margin(eps));
  } else {
    REQUIRE(got == static_cast<T>(expect));
  }
}

template <class T, int N>
void require_equal(wp::array<T, N>& a, const std::vector<double>& expect) {
  REQUIRE(int64_t(expect.size()) == a.size());
  for (int64_t k = 0; k < a.size(); ++k) require_close<T>(a.data()[k], expect[k], k);
}

}  // namespace
