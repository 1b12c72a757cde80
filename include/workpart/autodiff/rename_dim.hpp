#pragma once
/// \file rename_dim.hpp
/// `rename_dim<From, To>(e)`: expression e with index From read as index To. The derivative
/// of an inner sum runs the sum's body over the map's space extended by the sum's index,
/// which is there the space's next dimension (backward.hpp), whatever index the sum named.

#include <cstddef>
#include <tuple>
#include <utility>

#include "../core/affine.hpp"
#include "../expr/access.hpp"
#include "../expr/node.hpp"
#include "../expr/ops.hpp"

namespace workpart::detail {

constexpr affine_sig renamed_sig(affine_sig s, int from, int to) {
  if (!s.uses(from)) return s;
  s.present = (s.present & ~dim_bit(from)) | dim_bit(to);
  if (s.dynamic & dim_bit(from)) s.dynamic = (s.dynamic & ~dim_bit(from)) | dim_bit(to);
  s.coef[to] = s.coef[from];
  s.coef[from] = 0;
  return s;
}

/// The coefficients are stored in dimension order, so To takes From's place among them only
/// when no dimension lies between the two (true of a body that reads the space's indices and
/// the sum's, the only ones backward.hpp renames).
template <int From, int To, class A>
auto rename_affine(const A& a) {
  constexpr dim_mask between =
      From < To ? dims_below(To) & ~dims_below(From + 1) : dims_below(From) & ~dims_below(To + 1);
  static_assert(!A::sig.uses(From) || (!A::sig.uses(To) && (A::sig.present & between) == 0),
                "wp::backward: an inner sum's body reads an index between the space's and the "
                "sum's own (an index bound by another range): not differentiable yet");
  affine<renamed_sig(A::sig, From, To)> r;
  r.offset = a.offset;
  for (std::size_t t = 0; t < r.coef.size(); ++t) r.coef[t] = a.coef[t];
  return r;
}

template <class E>
inline constexpr bool is_val_node_v = false;
template <int D>
inline constexpr bool is_val_node_v<val_node<D>> = true;

template <int From, int To, class E>
auto rename_dim(const E& e) {
  if constexpr (From == To || !(E::info.free & dim_bit(From))) {
    return e;
  } else if constexpr (is_access_v<E>) {
    static_assert(E::all_affine,
                  "wp::backward: a read through an indirect subscript inside an inner sum is not "
                  "differentiable yet");
    return [&]<std::size_t... X>(std::index_sequence<X...>) {
      auto subs = std::make_tuple(rename_affine<From, To>(std::get<X>(e.subs))...);
      using R = access_node<typename E::value_type, E::array_type::rank,
                            std::tuple_element_t<X, decltype(subs)>...>;
      return R(*e.arr, std::get<X>(subs)...);
    }
    (std::make_index_sequence<std::size_t(E::array_type::rank)>{});
  } else if constexpr (is_val_node_v<E>) {
    return val_node<To>{};
  } else {
    return node_traits<E>::map(e, [](const auto& c) { return rename_dim<From, To>(c); });
  }
}

}  // namespace workpart::detail
