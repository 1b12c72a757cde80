#pragma once
/// \file min_plus.hpp
/// The inner kernel of the strategy search (optimize/search.hpp): for a block of table rows
/// that share all but the first digit of a dependent set,
///
///     val[j] = min_k (b[k] + C[k * J + j] (+ D[k * J + j])),  arg[j] = the first k attaining it,
///
/// for j < J, k < K (D optional: a second matrix, summed on the fly),
/// i.e. a min-plus matrix-vector product with its argmin. Rows run across the vector lanes
/// (no horizontal reductions): one add, one compare and two blends per lane per k.
///
/// A scalar version serves constant evaluation and other compilers. On x86 with GCC or Clang
/// the vector version is compiled three times, for SSE2 (the baseline), AVX2 and AVX-512F,
/// and the widest the CPU supports is chosen once at run time (`__builtin_cpu_supports`), so
/// a portable build still uses the machine's vectors. All versions give identical results
/// (the same additions, the same first-minimum rule).

#include <cstddef>
#include <limits>
#include <type_traits>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(WORKPART_PASE_NO_SIMD)
#define WORKPART_PASE_SIMD 1
#else
#define WORKPART_PASE_SIMD 0
#endif

namespace workpart::detail::pase {

/// The reference kernel (constexpr; any compiler); rows of C and D are `stride` apart, D may
/// be null.
template <class Arg>
constexpr void block_min_scalar(const double* b, const double* C, const double* D, std::size_t K,
                                std::size_t J, double* val, Arg* arg, std::size_t stride) {
  for (std::size_t j = 0; j < J; ++j) {
    val[j] = std::numeric_limits<double>::infinity();
    arg[j] = 0;
  }
  for (std::size_t k = 0; k < K; ++k) {
    const double bk = b[k];
    const double* row = C + k * stride;
    const double* row2 = D ? D + k * stride : nullptr;
    for (std::size_t j = 0; j < J; ++j) {
      const double s = row2 ? bk + (row[j] + row2[j]) : bk + row[j];  // the vector kernel's order
      if (s < val[j]) {
        val[j] = s;
        arg[j] = Arg(k);
      }
    }
  }
}

/// The runner-up pass's kernel (reference version): for k < K and j < J,
///     x = b[k] + (C[k * J + j] (+ D[k * J + j])) + o[j],   X[k * J + j] = x (X may be null),
/// and lo[k] = min_j x.
constexpr void block_rows_scalar(const double* b, const double* C, const double* D, const double* o,
                                 std::size_t K, std::size_t J, double* X, double* lo,
                                 std::size_t stride) {
  for (std::size_t k = 0; k < K; ++k) {
    const double bk = b[k];
    const double* row = C + k * stride;
    const double* row2 = D ? D + k * stride : nullptr;
    double m = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < J; ++j) {
      const double x = (row2 ? bk + (row[j] + row2[j]) : bk + row[j]) + o[j];
      if (X) X[k * stride + j] = x;
      m = x < m ? x : m;
    }
    lo[k] = m;
  }
}

#if WORKPART_PASE_SIMD

typedef double vec2d __attribute__((vector_size(16)));
typedef double vec4d __attribute__((vector_size(32)));
typedef double vec8d __attribute__((vector_size(64)));

/// The vector kernel for the vector type V: 4 vectors of rows at a time held in registers
/// over the whole k loop, then one vector, then single rows.
template <class V, bool Two, class Arg>
__attribute__((always_inline)) inline void block_min_vec(const double* b, const double* C,
                                                         const double* D, std::size_t K,
                                                         std::size_t J, double* val, Arg* arg) {
  constexpr std::size_t L = sizeof(V) / sizeof(double), U = 4, W = L * U;
  const double inf = std::numeric_limits<double>::infinity();
  std::size_t j0 = 0;
  for (; j0 + W <= J; j0 += W) {
    V a[U], ix[U];
    for (std::size_t u = 0; u < U; ++u) {
      a[u] = V{} + inf;
      ix[u] = V{};
    }
    for (std::size_t k = 0; k < K; ++k) {
      const V bk = V{} + b[k];
      const V kk = V{} + double(k);
      const double* row = C + k * J + j0;
      const double* row2 = Two ? D + k * J + j0 : nullptr;
      for (std::size_t u = 0; u < U; ++u) {
        V x;
        __builtin_memcpy(&x, row + L * u, sizeof x);
        if constexpr (Two) {
          V y;
          __builtin_memcpy(&y, row2 + L * u, sizeof y);
          x = x + y;
        }
        const V s = bk + x;
        const auto lt = s < a[u];
        a[u] = lt ? s : a[u];
        ix[u] = lt ? kk : ix[u];
      }
    }
    for (std::size_t u = 0; u < U; ++u)
      for (std::size_t l = 0; l < L; ++l) {
        val[j0 + L * u + l] = a[u][l];
        arg[j0 + L * u + l] = Arg(ix[u][l]);
      }
  }
  for (; j0 + L <= J; j0 += L) {
    V a = V{} + inf, ix = V{};
    for (std::size_t k = 0; k < K; ++k) {
      V x;
      __builtin_memcpy(&x, C + k * J + j0, sizeof x);
      if constexpr (Two) {
        V y;
        __builtin_memcpy(&y, D + k * J + j0, sizeof y);
        x = x + y;
      }
      const V s = (V{} + b[k]) + x;
      const auto lt = s < a;
      a = lt ? s : a;
      ix = lt ? (V{} + double(k)) : ix;
    }
    for (std::size_t l = 0; l < L; ++l) {
      val[j0 + l] = a[l];
      arg[j0 + l] = Arg(ix[l]);
    }
  }
  if (j0 < J) block_min_scalar(b, C + j0, Two ? D + j0 : nullptr, K, J - j0, val + j0, arg + j0, J);
}

template <class Arg>
__attribute__((noinline)) void block_min_sse2(const double* b, const double* C, const double* D,
                                              std::size_t K, std::size_t J, double* val, Arg* arg) {
  if (D)
    block_min_vec<vec2d, true>(b, C, D, K, J, val, arg);
  else
    block_min_vec<vec2d, false>(b, C, D, K, J, val, arg);
}
template <class Arg>
__attribute__((noinline, target("avx2"))) void block_min_avx2(const double* b, const double* C,
                                                              const double* D, std::size_t K,
                                                              std::size_t J, double* val,
                                                              Arg* arg) {
  if (D)
    block_min_vec<vec4d, true>(b, C, D, K, J, val, arg);
  else
    block_min_vec<vec4d, false>(b, C, D, K, J, val, arg);
}
template <class Arg>
__attribute__((noinline, target("avx512f"))) void block_min_avx512(const double* b, const double* C,
                                                                   const double* D, std::size_t K,
                                                                   std::size_t J, double* val,
                                                                   Arg* arg) {
  if (D)
    block_min_vec<vec8d, true>(b, C, D, K, J, val, arg);
  else
    block_min_vec<vec8d, false>(b, C, D, K, J, val, arg);
}

template <class V, bool Two>
__attribute__((always_inline)) inline void block_rows_vec(const double* b, const double* C,
                                                          const double* D, const double* o,
                                                          std::size_t K, std::size_t J, double* X,
                                                          double* lo) {
  constexpr std::size_t L = sizeof(V) / sizeof(double);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < K; ++k) {
    const V bk = V{} + b[k];
    const double* row = C + k * J;
    const double* row2 = Two ? D + k * J : nullptr;
    V m = V{} + inf;
    std::size_t j = 0;
    for (; j + L <= J; j += L) {
      V x, y, z;
      __builtin_memcpy(&x, row + j, sizeof x);
      if constexpr (Two) {
        __builtin_memcpy(&y, row2 + j, sizeof y);
        x = x + y;
      }
      __builtin_memcpy(&z, o + j, sizeof z);
      x = (bk + x) + z;
      if (X) __builtin_memcpy(X + k * J + j, &x, sizeof x);
      m = x < m ? x : m;
    }
    double mk = inf;
    for (std::size_t l = 0; l < L; ++l) mk = m[l] < mk ? m[l] : mk;
    for (; j < J; ++j) {
      const double x = (Two ? b[k] + (row[j] + row2[j]) : b[k] + row[j]) + o[j];
      if (X) X[k * J + j] = x;
      mk = x < mk ? x : mk;
    }
    lo[k] = mk;
  }
}

__attribute__((noinline)) inline void block_rows_sse2(const double* b, const double* C,
                                                      const double* D, const double* o,
                                                      std::size_t K, std::size_t J, double* X,
                                                      double* lo) {
  if (D)
    block_rows_vec<vec2d, true>(b, C, D, o, K, J, X, lo);
  else
    block_rows_vec<vec2d, false>(b, C, D, o, K, J, X, lo);
}
__attribute__((noinline, target("avx2"))) inline void block_rows_avx2(
    const double* b, const double* C, const double* D, const double* o, std::size_t K,
    std::size_t J, double* X, double* lo) {
  if (D)
    block_rows_vec<vec4d, true>(b, C, D, o, K, J, X, lo);
  else
    block_rows_vec<vec4d, false>(b, C, D, o, K, J, X, lo);
}
__attribute__((noinline, target("avx512f"))) inline void block_rows_avx512(
    const double* b, const double* C, const double* D, const double* o, std::size_t K,
    std::size_t J, double* X, double* lo) {
  if (D)
    block_rows_vec<vec8d, true>(b, C, D, o, K, J, X, lo);
  else
    block_rows_vec<vec8d, false>(b, C, D, o, K, J, X, lo);
}

/// 2: AVX-512F, 1: AVX2, 0: SSE2; decided once.
inline int simd_level() {
  static const int level = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2")) return 1;
    return 0;
  }();
  return level;
}

#endif  // WORKPART_PASE_SIMD

/// val[j], arg[j] = min and first argmin over k < K of b[k] + C[k * J + j] (+ D[k * J + j]
/// when D is not null), for j < J.
template <class Arg>
constexpr void block_min(const double* b, const double* C, const double* D, std::size_t K,
                         std::size_t J, double* val, Arg* arg) {
#if WORKPART_PASE_SIMD
  if (!std::is_constant_evaluated()) {
    switch (simd_level()) {
      case 2:
        block_min_avx512(b, C, D, K, J, val, arg);
        return;
      case 1:
        block_min_avx2(b, C, D, K, J, val, arg);
        return;
      default:
        block_min_sse2(b, C, D, K, J, val, arg);
        return;
    }
  }
#endif
  block_min_scalar(b, C, D, K, J, val, arg, J);
}

/// For k < K: X[k * J + j] = b[k] + (C[k * J + j] (+ D[k * J + j])) + o[j] (X may be null)
/// and lo[k] = min over j < J of it: the runner-up pass's block.
constexpr void block_rows(const double* b, const double* C, const double* D, const double* o,
                          std::size_t K, std::size_t J, double* X, double* lo) {
#if WORKPART_PASE_SIMD
  if (!std::is_constant_evaluated()) {
    switch (simd_level()) {
      case 2:
        block_rows_avx512(b, C, D, o, K, J, X, lo);
        return;
      case 1:
        block_rows_avx2(b, C, D, o, K, J, X, lo);
        return;
      default:
        block_rows_sse2(b, C, D, o, K, J, X, lo);
        return;
    }
  }
#endif
  block_rows_scalar(b, C, D, o, K, J, X, lo, J);
}

}  // namespace workpart::detail::pase
