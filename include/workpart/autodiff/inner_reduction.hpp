#pragma once
/// \file inner_reduction.hpp
/// The derivative of a forward map's inner reductions (`wp::sum`, `max_of`, `min_of`), for
/// backward.hpp: maps over the space extended by the reduction's index, seeded by the seed
/// d<map> stored per point, nested reductions one level further each.

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/flat_tuple.hpp"
#include "../core/index.hpp"
#include "../core/space.hpp"
#include "../error.hpp"
#include "../expr/access_list.hpp"
#include "../expr/interval.hpp"
#include "../expr/map.hpp"
#include "adjoint_kinds/kind.hpp"
#include "derivative_maps.hpp"
#include "gradient_table.hpp"
#include "padded_gradient.hpp"
#include "swap_dims.hpp"
#include "rules.hpp"

namespace workpart::detail {

/// An inner reduction's derivative runs after d<map>, whose later statements read the
/// gradients of what the forward map's earlier statements wrote: none of those may be
/// written by it (refused on every rank alike).
template <int N, class... S, class Terms>
void check_inner_reduction_order(const map_t<N, S...>& m, const Terms& terms,
                                 const gradient_table& grads) {
  auto refuse_if = [&](const void* origin, const auto& fst) {
    if (origin == static_cast<const void*>(fst.lhs.arr))
      throw plan_error("wp::backward: map '" + m.name() + "' reduces over '" + fst.lhs.arr->name() +
                       "', which a statement of the same map writes; an inner reduction's "
                       "derivative runs after the map's other derivatives: write '" +
                       fst.lhs.arr->name() + "' in an earlier map");
  };
  auto against_map = [&](const auto& term) {
    // the forward array whose gradient the term writes (none: a nested reduction's terms are
    // checked at its level)
    if (const void* origin = adjoint_kind_of<decltype(term)>::gradient_origin(term, grads))
      std::apply([&](const auto&... fst) { (refuse_if(origin, fst), ...); }, m.statements());
  };
  std::apply([&](const auto&... term) { (against_map(term), ...); }, terms);
}

/// An affine form of the space's indices (an inner range's bound) as an expression of
/// wp::val terms, for the masks below.
template <int D, int N, class F, class E>
auto affine_value_from(const F& f, const E& e) {
  if constexpr (D == N)
    return e;
  else if constexpr ((F::sig.present & dim_bit(D)) != 0)
    return affine_value_from<D + 1, N>(f, e + val_node<D>{} * f.coef_of(D));
  else
    return affine_value_from<D + 1, N>(f, e);
}
template <int N, class F>
auto affine_value(const F& f) {
  return affine_value_from<0, N>(f, as_node(f.offset));
}

/// The maps of an inner reduction's derivative over the space `outer` of the map that stored
/// its seed (`base`: d<map>, or for a nested reduction the derivative map of the one around
/// it), extended by the reduction's index (renamed to the space's next dimension N), seeded
/// by the stored seed: `<base>.sum`, and before it, for max_of / min_of, `<base>.sum.ties`
/// counting the terms equal to the stored result (its own map: the plans combine the counts
/// before the shares). A reduction nested in the body is differentiated the same way one
/// level further (its seed stored per point of `<base>.sum`'s space, its maps
/// `<base>.sum.sum`...), and padded reads' gradients are added into their arrays after it.
template <class Fwd, int N, class It>
auto inner_reduction_maps(const Fwd& m, const space<N>& outer, const std::string& base,
                          const It& it, gradient_table& grads, int k) {
  using T = typename It::value_type;
  auto seed = stored_access<N>(*static_cast<array<T, N>*>(it.seeds), it.at);
  auto body = swap_dims<It::dim, N>(it.node.body);
  std::array<bounds, std::size_t(N + 1)> b{};
  for (int d = 0; d < N; ++d)
    b[std::size_t(d)] = {outer.lo[std::size_t(d)], outer.hi[std::size_t(d)]};
  // bounds that vary with the outer indices: the hull of the ranges over the space
  constexpr bool varying =
      !constant_bound<decltype(it.node.lo)>() || !constant_bound<decltype(it.node.hi)>();
  const index_t rlo = affine_extreme(it.node.lo, outer.lo, outer.hi, false);
  const index_t rhi = affine_extreme(it.node.hi, outer.lo, outer.hi, true);
  b[std::size_t(N)] = {rlo, std::max(rlo, rhi)};
  const space<N + 1> sp(typename space<N + 1>::from_bounds_t{}, b);
  const std::string sfx = k == 0 ? std::string() : std::to_string(k + 1);
  const std::string name = base + ".sum" + sfx;
  // Over the hull a point of the extended space outside its own range contributes nothing.
  auto in_range = [&](const auto& x) {
    if constexpr (!varying) {
      return x;
    } else {
      const auto r = val_node<N>{};
      return workpart::select(r >= affine_value<N>(it.node.lo),
                              workpart::select(r < affine_value<N>(it.node.hi), x, 0), 0);
    }
  };
  // ... and its accesses must stay inside their arrays there (refused on every rank alike)
  auto over_hull = [&](const std::string& map_name, auto&& make) {
    if constexpr (!varying) {
      return make();
    } else {
      try {
        auto dm = make();
        dm.require_valid();
        return dm;
      } catch (const shape_error& e) {
        throw plan_error("wp::backward: map '" + m.name() +
                         "': its inner reduction's range depends on the outer indices, and the "
                         "derivative '" +
                         map_name +
                         "' runs over the hull of those ranges, where an access leaves its "
                         "array (" +
                         std::string(e.what()) +
                         "); pad the array, or write the reduction as a statement over a "
                         "space that includes its index, masked with wp::select");
      }
    }
  };
  // The body's derivative seeded by `s`: its map, its nested reductions' maps, its unpads,
  // each what its terms' kinds give (adjoint_kinds/).
  auto level = [&](const auto& s) {
    auto terms = with_origin(adjoint(body, s, grads), it.origin);
    check_inner_reduction_order(m, terms, grads);
    derivative_site<N + 1> site{sp, name, name.substr(1), grads, 0};
    auto stores_of = [&](auto& c) { return adjoint_kind_of<decltype(c)>::stores(c, site); };
    auto forms = std::apply(
        [&](auto&... c) { return flatten(std::tuple<decltype(stores_of(c))...>{stores_of(c)...}); },
        terms);
    auto dm = over_hull(name, [&] {
      auto d = std::apply([&](const auto&... st) { return workpart::map(name, sp, st...); }, forms);
      choose_forms(d, grads);
      return d;
    });
    site.sums = 0;
    auto nested_of = [&](const auto& c) {
      return adjoint_kind_of<decltype(c)>::maps_after(c, m, site);
    };
    auto nested = std::apply(
        [&](const auto&... c) {
          return flatten(std::tuple<decltype(nested_of(c))...>{nested_of(c)...});
        },
        terms);
    return std::tuple_cat(std::tuple{std::move(dm)}, std::move(nested), unpad_maps(terms, grads));
  };
  if constexpr (It::sums) {
    return level(in_range(seed));
  } else {
    using V = typename It::node_type::value_type;
    auto result = stored_access<N>(*static_cast<array<V, N>*>(it.results), it.at);
    std::array<index_t, std::size_t(N)> shape{};
    for (std::size_t d = 0; d < std::size_t(N); ++d)
      shape[d] = static_cast<const array<T, N>*>(it.seeds)->extent(int(d));
    auto& ties = grads.counts<T, N>(it.origin, "ties.dsum." + base.substr(1) + sfx, shape);
    const auto won = body == result;
    auto tm = over_hull(name + ".ties", [&] {
      return derivative_map(
          name + ".ties", sp,
          std::tuple{make_statement<add_tag>(stored_access<N>(ties, it.at),
                                             in_range(workpart::select(won, 1, 0)))},
          grads);
    });
    auto share = in_range(workpart::select(won, seed / stored_access<N>(ties, it.at), 0));
    return std::tuple_cat(std::tuple{std::move(tm)}, level(share));
  }
}

}  // namespace workpart::detail
