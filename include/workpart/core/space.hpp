#pragma once
/// \file space.hpp
/// Iteration spaces: `[lo_d, hi_d)` per dimension.

#include <array>
#include <concepts>
#include <string>

#include "../error.hpp"
#include "index.hpp"

namespace workpart {

/// One dimension's half-open bounds `[lo, hi)`; written `{lo, hi}` in `wp::space`.
struct bounds {
  index_t lo = 0;
  index_t hi = 0;
};

/// The iteration domain of a map: a box of rank N (N may be 0: a single point).
/// \code
///   wp::space(M, N, K)              // [0,M) x [0,N) x [0,K)
///   wp::space({1, M - 1}, {0, N})   // [1,M-1) x [0,N)
/// \endcode
template <int N>
struct space {
  static constexpr int rank = N;
  std::array<index_t, N> lo{};
  std::array<index_t, N> hi{};

  constexpr space() = default;
  template <std::integral... E>
  requires(sizeof...(E) == N && N > 0) explicit space(E... e)
      : lo{}, hi{static_cast<index_t>(e)...} {
    for (int d = 0; d < N; ++d)
      if (hi[d] < 0)
        throw shape_error("wp::space: extent " + std::to_string(hi[d]) + " of dimension " +
                          std::to_string(d) + " is negative; extents are >= 0");
    check_points();
  }
  struct from_bounds_t {};
  space(from_bounds_t, const std::array<bounds, N>& b) {
    for (int d = 0; d < N; ++d) {
      lo[d] = b[d].lo;
      hi[d] = b[d].hi;
      if (hi[d] < lo[d])
        throw shape_error("wp::space: dimension " + std::to_string(d) + " has hi " +
                          std::to_string(hi[d]) + " below lo " + std::to_string(lo[d]) +
                          "; write {lo, hi} with lo <= hi");
      index_t ext = 0;
      if (__builtin_sub_overflow(hi[d], lo[d], &ext))
        throw shape_error("wp::space: dimension " + std::to_string(d) + " spans [" +
                          std::to_string(lo[d]) + ", " + std::to_string(hi[d]) +
                          "), more than 2^63 - 1 points; use smaller bounds");
    }
    check_points();
  }
  /// Every extent >= 0 (checked by the constructors) and the product fits index_t.
  void check_points() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d)
      if (!detail::mul_fits(n, extent(d), n))
        throw shape_error("wp::space " + str() +
                          ": more than 2^63 - 1 points (the product of "
                          "the extents overflows a 64-bit count); use smaller extents");
  }
  space(bounds b0) requires(N == 1) : space(from_bounds_t{}, std::array<bounds, 1>{b0}) {}
  space(bounds b0, bounds b1) requires(N == 2)
      : space(from_bounds_t{}, std::array<bounds, 2>{b0, b1}) {}
  space(bounds b0, bounds b1, bounds b2) requires(N == 3)
      : space(from_bounds_t{}, std::array<bounds, 3>{b0, b1, b2}) {}
  space(bounds b0, bounds b1, bounds b2, bounds b3) requires(N == 4)
      : space(from_bounds_t{}, std::array<bounds, 4>{b0, b1, b2, b3}) {}
  space(bounds b0, bounds b1, bounds b2, bounds b3, bounds b4) requires(N == 5)
      : space(from_bounds_t{}, std::array<bounds, 5>{b0, b1, b2, b3, b4}) {}
  space(bounds b0, bounds b1, bounds b2, bounds b3, bounds b4, bounds b5) requires(N == 6)
      : space(from_bounds_t{}, std::array<bounds, 6>{b0, b1, b2, b3, b4, b5}) {}

  constexpr index_t extent(int d) const { return hi[d] > lo[d] ? hi[d] - lo[d] : 0; }
  constexpr index_t points() const {
    index_t n = 1;
    for (int d = 0; d < N; ++d) n *= extent(d);
    return n;
  }
  constexpr bool empty() const { return points() == 0; }
  std::string str() const {
    std::string s = "[";
    for (int d = 0; d < N; ++d) {
      if (d) s += ", ";
      s += std::to_string(lo[d]) + ":" + std::to_string(hi[d]);
    }
    return s + "]";
  }
};

space()->space<0>;
template <std::integral... E>
space(E...) -> space<sizeof...(E)>;
space(bounds)->space<1>;
space(bounds, bounds)->space<2>;
space(bounds, bounds, bounds)->space<3>;
space(bounds, bounds, bounds, bounds)->space<4>;
space(bounds, bounds, bounds, bounds, bounds)->space<5>;
space(bounds, bounds, bounds, bounds, bounds, bounds)->space<6>;

namespace detail {
template <class T>
inline constexpr bool is_space_v = false;
template <int N>
inline constexpr bool is_space_v<space<N>> = true;

}  // namespace detail

}  // namespace workpart
