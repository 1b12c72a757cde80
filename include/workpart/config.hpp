#pragma once
/// \file config.hpp
/// Compile-time limits and portability macros shared by every layer.

#include <cstdint>

// Every evaluation path of an expression node runs on the host and in device code.
#if defined(__CUDACC__)
#define WORKPART_HD __host__ __device__
#else
#define WORKPART_HD
#endif
#define WORKPART_HOST_DEVICE WORKPART_HD

// The device system the device path (wp::backend::cuda) is built for: CUDA under nvcc, else
// Thrust's OpenMP system when the program links workpart::device_omp (WORKPART_DEVICE_OMP),
// else none (asking for the backend is then a wp::backend_error).
#define WORKPART_DEVICE_NONE 0
#define WORKPART_DEVICE_CUDA 1
#define WORKPART_DEVICE_OMP_SYSTEM 2
#if defined(__CUDACC__)
#define WORKPART_DEVICE_SYSTEM WORKPART_DEVICE_CUDA
#elif defined(WORKPART_DEVICE_OMP)
#define WORKPART_DEVICE_SYSTEM WORKPART_DEVICE_OMP_SYSTEM
#else
#define WORKPART_DEVICE_SYSTEM WORKPART_DEVICE_NONE
#endif

// Header-only (the default): the planner's and the runtimes' functions that are not templates
// are inline, compiled again in every translation unit that uses them. With
// WORKPART_SEPARATE_COMPILATION (CMake target workpart::compiled) they are compiled once, into
// that library (src/workpart.cpp), and the headers only declare them: each file that
// distributes a program compiles about a third less code. The library is built for the host
// backend: the device backend (workpart::device_omp, nvcc) is header-only.
#if defined(WORKPART_SEPARATE_COMPILATION)
#if WORKPART_DEVICE_SYSTEM != WORKPART_DEVICE_NONE
#error \
    "workpart: WORKPART_SEPARATE_COMPILATION (workpart::compiled) is built for the host backend; a program built with the device backend (workpart::device_omp or nvcc) links workpart::workpart (header-only) instead"
#endif
#define WORKPART_HEADER_ONLY 0
#define WORKPART_DECL
#else
#define WORKPART_HEADER_ONLY 1
#define WORKPART_DECL inline
#endif

#if defined(__GNUC__) || defined(__clang__)
#define WORKPART_ALWAYS_INLINE inline __attribute__((always_inline))
#define WORKPART_RESTRICT __restrict__
#else
#define WORKPART_ALWAYS_INLINE inline
#define WORKPART_RESTRICT
#endif

namespace workpart {

/// Extents, bounds, offsets and coordinates.
using index_t = std::int64_t;

namespace detail {
/// Index slots in a point: the space's dimensions, then inner (wp::range) indices.
/// The last two slots are reserved for the implicit index of `wp::all` reductions.
inline constexpr int max_dims = 16;
inline constexpr int max_user_dims = max_dims - 2;
inline constexpr int all_dim_first = max_user_dims;

/// Largest array rank.
inline constexpr int max_rank = 8;

template <class...>
inline constexpr bool always_false = false;

/// a * b and a + b on extents, false when the result leaves index_t (no wrap-around).
constexpr bool mul_fits(index_t a, index_t b, index_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
constexpr bool add_fits(index_t a, index_t b, index_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

using dim_mask = std::uint32_t;
constexpr dim_mask dim_bit(int d) { return dim_mask(1) << d; }
constexpr dim_mask dims_below(int n) { return n >= 32 ? ~dim_mask(0) : (dim_mask(1) << n) - 1; }
}  // namespace detail
}  // namespace workpart
