#pragma once
/// \file padded_gradient.hpp
/// The gradient of a padded read `wp::padded(X, fill)(g(p))` (rules.hpp's padded_adjoint).
///
/// The read is X(g(p)) where g(p) falls inside X and the constant fill elsewhere, so its
/// contribution `dX(g(p)) += seed` must be dropped where g(p) leaves X. No statement can
/// write there, so the contribution goes into an array made here, `dX.padded`, that spans X
/// and every g(p) over the derivative's space (X's box widened to the hull of the
/// subscripts): `dX.padded(g(p) - lo) += seed`, which never leaves it. A map of its own,
/// `unpad.dX.padded`, then adds the part over X into dX (`dX(i) += dX.padded(i - lo)`, a '='
/// where it is dX's first write and covers it); the border, where the read was the fill, is
/// never read. The planner sees two plain maps: under a grid that splits a padded axis the
/// halo of dX.padded is combined rank to rank like any split '+='.

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../core/affine.hpp"
#include "../core/array.hpp"
#include "../core/space.hpp"
#include "../expr/statement.hpp"
#include "gradient_table.hpp"
#include "rules.hpp"

namespace workpart::detail {

/// The least (or the greatest) value of an affine form over the points of the box [lo, hi).
template <class F, std::size_t N>
index_t affine_extreme(const F& f, const std::array<index_t, N>& lo,
                       const std::array<index_t, N>& hi, bool greatest) {
  index_t v = f.offset;
  for (std::size_t d = 0; d < N; ++d) {
    const index_t c = f.coef_of(int(d));
    v = aff_add(v, aff_mul(c, (c > 0) == greatest ? hi[d] - 1 : lo[d]));
  }
  return v;
}

/// f + by, as a form that carries an offset (whatever f's type said).
template <dim_mask P, dim_mask D, bool O, index_t... C>
affine_form<P, D, true, C...> shifted(const affine_form<P, D, O, C...>& f, index_t by) {
  affine_form<P, D, true, C...> g;
  g.coef = f.coef;
  g.offset = aff_add(f.offset, by);
  return g;
}

/// The write `dX.padded(g(p) - lo) += seed` of a padded read's contribution over the space
/// `sp` of the map it runs in; makes dX.padded (X's box widened to g's hull over sp) and notes
/// it, with lo, in the contribution for unpad_statement.
template <int N, class A, class S>
auto padded_write(padded_adjoint<A, S>& c, const space<N>& sp, gradient_table& grads) {
  using T = typename A::value_type;
  constexpr int R = A::array_type::rank;
  const auto& x = *c.acc.arr;
  std::array<index_t, std::size_t(R)> shape{};
  [&]<std::size_t... X>(std::index_sequence<X...>) {
    (
        [&] {
          const auto& f = std::get<X>(c.acc.subs);
          index_t lo = 0, hi = x.extent(int(X));
          if (!sp.empty()) {
            lo = std::min(lo, affine_extreme(f, sp.lo, sp.hi, false));
            hi = std::max(hi, aff_add(affine_extreme(f, sp.lo, sp.hi, true), 1));
          }
          c.lo[X] = lo;
          shape[X] = hi - lo;
        }(),
        ...);
  }
  (std::make_index_sequence<std::size_t(R)>{});
  array<T, R>& padded = grads.padded_of<T, R>(x, shape);
  c.grad = &padded;
  auto write = [&]<std::size_t... X>(std::index_sequence<X...>) {
    return padded(shifted(std::get<X>(c.acc.subs), -c.lo[X])...);
  }
  (std::make_index_sequence<std::size_t(R)>{});
  return std::tuple{make_statement<add_tag>(write, c.seed)};
}

/// `dX(i...) += dX.padded(i - lo...)` over space_of(X): the part of a padded read's gradient
/// over X.
template <class A, class S>
auto unpad_statement(const padded_adjoint<A, S>& c, gradient_table& grads) {
  using T = typename A::value_type;
  constexpr int R = A::array_type::rank;
  auto& padded = *static_cast<array<T, R>*>(c.grad);
  auto& dx = grads.of(*c.acc.arr);
  return [&]<std::size_t... X>(std::index_sequence<X...>) {
    return make_statement<add_tag>(dx(workpart::index<int(X)>{}...),
                                   padded((workpart::index<int(X)>{} - c.lo[X])...));
  }
  (std::make_index_sequence<std::size_t(R)>{});
}

}  // namespace workpart::detail
