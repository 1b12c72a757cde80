#pragma once
// What tests/unit/test_workloads*.cpp share: the references the workloads are checked against.

#include <catch2/catch.hpp>

#include <workpart/workpart.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

// ---------------------------------------------------------------- helpers

/// Fills root's buffer of `a` with reproducible random values: reals in [lo, hi], integers in
/// [-7, 7].
template <class T, int N>
void fill_random(wp::array<T, N>& a, unsigned seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  T* p = a.data();
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> d(-7, 7);
    for (index_t n = 0; n < a.size(); ++n) p[n] = static_cast<T>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (index_t n = 0; n < a.size(); ++n) p[n] = static_cast<T>(d(rng));
  }
}

/// A copy of root's buffer as doubles (the reference loops compute in double).
template <class T, int N>
std::vector<double> as_doubles(wp::array<T, N>& a) {
  const T* p = a.data();
  return std::vector<double>(p, p + a.size());
}

/// Relative tolerance per element type for results of short sums (tens of terms).
template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

/// The largest error of `got` against `want`, each element measured relative to max(mag, 1)
/// where mag bounds the size of the terms that made the element (|want| when empty).
struct comparison {
  double worst = 0.0;
  std::size_t where = 0;
  double got = 0.0, want = 0.0;
};
template <class T>
comparison compare(const T* got, std::size_t n, const std::vector<double>& want,
                   const std::vector<double>& mag = {}) {
  comparison c;
  if (n != want.size()) {
    c.worst = std::numeric_limits<double>::infinity();
    return c;
  }
  for (std::size_t e = 0; e < n; ++e) {
    const double g = static_cast<double>(got[e]);
    const double scale = std::max(1.0, mag.empty() ? std::abs(want[e]) : mag[e]);
    const double err =
        std::isfinite(g) ? std::abs(g - want[e]) / scale : std::numeric_limits<double>::infinity();
    if (err > c.worst) {
      c.worst = err;
      c.where = e;
      c.got = g;
      c.want = want[e];
    }
  }
  return c;
}

/// Checks every element of `a` against `want` (exactly for integer arrays).
template <class T, int N>
void check_array(wp::array<T, N>& a, const std::vector<double>& want,
                 const std::vector<double>& mag = {}) {
  const comparison c = compare(a.data(), static_cast<std::size_t>(a.size()), want, mag);
  INFO("array '" << a.name() << "': worst element " << c.where << " is " << c.got
                 << ", the plain loop gives " << c.want);
  if constexpr (std::is_integral_v<T>)
    CHECK(c.worst == 0.0);
  else
    CHECK(c.worst <= tolerance<T>());
}

inline long gemm_calls() { return wp::detail::counters().gemm_calls.load(); }

/// Checks an integer result element by element, naming the first mismatch.
template <class T>
void check_exact(const T* got, const std::vector<std::int64_t>& want) {
  std::size_t bad = 0, first = 0;
  for (std::size_t e = want.size(); e-- > 0;)
    if (std::int64_t(got[e]) != want[e]) {
      ++bad;
      first = e;
    }
  INFO(bad << " of " << want.size() << " elements differ; the first, element " << first << ", is "
           << std::int64_t(got[first]) << " where the plain loop gives " << want[first]);
  CHECK(bad == 0);
}

/// Reference C += alpha * A * B over double buffers, with element getters for A, B and an
/// index function for C, also returning the magnitude of each result (for the tolerance).
template <class GetA, class GetB, class IdxC>
void reference_matmul(index_t M, index_t N, index_t K, double alpha, GetA a, GetB b, IdxC c,
                      std::vector<double>& C, std::vector<double>& mag) {
  mag.assign(C.size(), 0.0);
  for (index_t i = 0; i < M; ++i)
    for (index_t j = 0; j < N; ++j) {
      double s = 0.0, m = std::abs(C[c(i, j)]);
      for (index_t k = 0; k < K; ++k) {
        s += alpha * a(i, k) * b(k, j);
        m += std::abs(alpha * a(i, k) * b(k, j));
      }
      C[c(i, j)] += s;
      mag[c(i, j)] = m;
    }
}

inline std::string gemm_text(int m, int n, int k) {
  const auto d = [](int x) { return "i" + std::to_string(x); };
  return "gemm: C[" + d(m) + " x " + d(n) + "] += A[" + d(m) + " x " + d(k) + "] * B[" + d(k) +
         " x " + d(n) + "], no batch";
}

constexpr index_t M = 37, N = 41, K = 29;

// ---------------------------------------------------------------- matmul, any axis order

/// C(i, j) += A(i, k) * B(k, j) where i, j, k name space dimensions DM, DN, DK.
template <class T, int DM, int DN, int DK>
void matmul_in_axis_order() {
  INFO("space dimensions: m = " << DM << ", n = " << DN << ", k = " << DK);
  std::array<index_t, 3> ext{};
  ext[DM] = M;
  ext[DN] = N;
  ext[DK] = K;
  wp::array<T, 2> A("A", {M, K}), B("B", {K, N}), C("C", {M, N});
  fill_random(A, 1);
  fill_random(B, 2);
  fill_random(C, 3);
  const auto a = as_doubles(A), b = as_doubles(B);
  auto want = as_doubles(C);
  std::vector<double> mag;
  reference_matmul(
      M, N, K, 1.0, [&](index_t i, index_t k) { return a[i * K + k]; },
      [&](index_t k, index_t j) { return b[k * N + j]; },
      [](index_t i, index_t j) { return std::size_t(i * N + j); }, want, mag);

  constexpr wp::index<DM> i{};
  constexpr wp::index<DN> j{};
  constexpr wp::index<DK> k{};
  auto mm = wp::map("matmul", wp::space(ext[0], ext[1], ext[2]), C(i, j) += A(i, k) * B(k, j));
  const std::string text = wp::explain_local(mm);
  INFO(text);
  CHECK_THAT(text, Catch::Contains(gemm_text(DM, DN, DK)));

  const long before = gemm_calls();
  wp::run(mm);
  CHECK(gemm_calls() - before == 1);
  check_array(C, want, mag);
}

}  // namespace
