#pragma once
/// \file index.hpp
/// Index variables: `wp::index<D>` names dimension D of the iteration space it is used in.

#include "../config.hpp"

namespace workpart {

/// Dimension D of an iteration space (D < space rank), or an inner index bound by `wp::range`.
/// Empty: everything about it is in its type, so it works inside constant expressions.
template <int D>
struct index {
  static_assert(D >= 0 && D < detail::max_user_dims,
                "workpart::index<D>: D must be in [0, 14); at most 14 index variables per map");
  static constexpr int dim = D;
};

/// `wp::all` as a subscript reads the whole axis (inside wp::sum / max_of / min_of it is
/// iterated by an implicit inner index).
struct all_t {
  explicit constexpr all_t() = default;
};
inline constexpr all_t all{};

namespace detail {
template <int N>
struct index_list;
// Plain aggregates (not tuples): structured bindings then name the members themselves,
// which keeps them usable in constant expressions.
template <>
struct index_list<1> {
  index<0> i0;
};
template <>
struct index_list<2> {
  index<0> i0;
  index<1> i1;
};
template <>
struct index_list<3> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
};
template <>
struct index_list<4> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
  index<3> i3;
};
template <>
struct index_list<5> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
  index<3> i3;
  index<4> i4;
};
template <>
struct index_list<6> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
  index<3> i3;
  index<4> i4;
  index<5> i5;
};
template <>
struct index_list<7> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
  index<3> i3;
  index<4> i4;
  index<5> i5;
  index<6> i6;
};
template <>
struct index_list<8> {
  index<0> i0;
  index<1> i1;
  index<2> i2;
  index<3> i3;
  index<4> i4;
  index<5> i5;
  index<6> i6;
  index<7> i7;
};

template <class T>
inline constexpr bool is_index_v = false;
template <int D>
inline constexpr bool is_index_v<index<D>> = true;
}  // namespace detail

/// `auto [i, j, k] = wp::indices<3>();` binds index<0>, index<1>, index<2>.
/// \code
///   auto [i, j, k] = wp::indices<3>();
///   auto mm = wp::map("matmul", wp::space(M, N, K), C(i, j) += A(i, k) * B(k, j));
/// \endcode
template <int N>
constexpr auto indices() {
  static_assert(N >= 1 && N <= 8, "workpart::indices<N>: N must be in [1, 8]");
  if constexpr (N >= 1 && N <= 8) return detail::index_list<N>{};
}

}  // namespace workpart
