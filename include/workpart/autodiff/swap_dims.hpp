#pragma once
/// \file swap_dims.hpp
/// `swap_dims<A, B>(e)`: expression e with indices A and B exchanged everywhere — in affine
/// and indirect subscripts, padded reads, wp::val, and the index and bounds of every inner
/// range. The derivative of an inner reduction runs its body over the map's space extended by
/// the reduction's index, which there is the space's next dimension N (inner_reduction.hpp),
/// whatever index the reduction named. A plain renaming of that index to N would capture a
/// range nested in the body that is bound to N itself (`sum(range(r), sum(range(c), w(c, r)))`
/// with `auto [i, c, r]`: c is index 1, the space's next one): the exchange is a bijection of
/// the indices, so the body means what it meant, for every nesting depth and index order.

#include <cstddef>
#include <tuple>
#include <utility>

#include "../core/affine.hpp"
#include "../expr/access.hpp"
#include "../expr/node.hpp"
#include "../expr/ops.hpp"
#include "../expr/padded.hpp"
#include "../expr/reduce.hpp"

namespace workpart::detail {

constexpr int swapped_dim(int d, int a, int b) { return d == a ? b : d == b ? a : d; }

constexpr affine_sig swapped_sig(const affine_sig& s, int a, int b) {
  affine_sig r;
  r.has_offset = s.has_offset;
  for (int d = 0; d < max_dims; ++d) {
    const int e = swapped_dim(d, a, b);
    if (s.present & dim_bit(d)) r.present |= dim_bit(e);
    if (s.dynamic & dim_bit(d)) r.dynamic |= dim_bit(e);
    r.coef[e] = s.coef[d];
  }
  return r;
}

/// The runtime coefficients are stored in dimension order: they are placed anew.
template <int A, int B, class F>
auto swap_affine(const F& f) {
  constexpr affine_sig S = swapped_sig(F::sig, A, B);
  affine<S> r;
  r.offset = f.offset;
  for (int d = 0; d < max_dims; ++d)
    if (S.uses(d)) r.coef[std::size_t(S.slot(d))] = f.coef_of(swapped_dim(d, A, B));
  return r;
}

template <int A, int B, class E>
auto swap_dims(const E& e);

template <int A, int B, class S>
auto swap_sub(const S& s) {
  if constexpr (is_affine_v<S>)
    return swap_affine<A, B>(s);
  else if constexpr (std::is_same_v<S, all_sub>)
    return s;
  else
    return indirect_sub<decltype(swap_dims<A, B>(s.e))>{swap_dims<A, B>(s.e)};
}

/// An inner range's bound: affine, or an integer-valued expression (data-dependent).
template <int A, int B, class Bd>
auto swap_bound(const Bd& b) {
  if constexpr (is_affine_v<Bd>)
    return swap_affine<A, B>(b);
  else
    return swap_dims<A, B>(b);
}

template <class E>
inline constexpr bool is_val_node_v = false;
template <int D>
inline constexpr bool is_val_node_v<val_node<D>> = true;
template <class E>
inline constexpr bool is_padded_node_v = false;
template <class Acc>
inline constexpr bool is_padded_node_v<padded_node<Acc>> = true;
template <class E>
inline constexpr bool is_reduce_node_v = false;
template <class Red, int D, class Lo, class Hi, class Body>
inline constexpr bool is_reduce_node_v<reduce_node<Red, D, Lo, Hi, Body>> = true;

template <int A, int B, class E>
auto swap_dims(const E& e) {
  constexpr dim_mask touched = dim_bit(A) | dim_bit(B);
  if constexpr (A == B || ((E::info.free | E::info.bound) & touched) == 0) {
    return e;
  } else if constexpr (is_access_v<E>) {
    static_assert(E::all_affine || (E::indirect_free & touched) == 0,
                  "wp::backward: a read through an indirect subscript of an inner reduction's "
                  "index is not differentiable yet");
    return [&]<std::size_t... X>(std::index_sequence<X...>) {
      auto subs = std::make_tuple(swap_sub<A, B>(std::get<X>(e.subs))...);
      using R = access_node<typename E::value_type, E::array_type::rank,
                            std::tuple_element_t<X, decltype(subs)>...>;
      return R(*e.arr, std::get<X>(subs)...);
    }
    (std::make_index_sequence<std::size_t(E::array_type::rank)>{});
  } else if constexpr (is_val_node_v<E>) {
    return val_node<swapped_dim(E::dim, A, B)>{};
  } else if constexpr (is_padded_node_v<E>) {
    auto acc = swap_dims<A, B>(e.acc);
    return padded_node<decltype(acc)>(acc, e.fill);
  } else if constexpr (is_reduce_node_v<E>) {
    auto lo = swap_bound<A, B>(e.lo);
    auto hi = swap_bound<A, B>(e.hi);
    auto body = swap_dims<A, B>(e.body);
    return reduce_node<typename E::reduction, swapped_dim(E::dim, A, B), decltype(lo), decltype(hi),
                       decltype(body)>(lo, hi, body);
  } else {
    return node_traits<E>::map(e, [](const auto& c) { return swap_dims<A, B>(c); });
  }
}

}  // namespace workpart::detail
