#pragma once
/// \file derivative_maps.hpp
/// The maps a backward map is made of (backward.hpp): the zeroing maps of the gradient
/// buffers, the '=' or '+=' form each contribution runs as (zeroing elision), an inner
/// reduction's stored seed, a derivative map of contributions, and the maps that add padded
/// reads' gradients into their arrays.

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
#include "gradient_table.hpp"
#include "swap_dims.hpp"
#include "rules.hpp"

namespace workpart::detail {

/// `a(i0, ..., iN-1)`: a plain access over the first N indices.
template <int N, class A>
auto plain_access(A& a) {
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    return a(workpart::index<int(D)>{}...);
  }
  (std::make_index_sequence<std::size_t(N)>{});
}

/// The map that sets buffer g to zero over its whole shape. Only the first asked for runs
/// (its statement is pruned otherwise), and none where the gradient accumulates or its first
/// write covers it.
template <class T, int R>
auto zero_map(array<T, R>& g, gradient_table& grads) {
  const auto [runs, name] = grads.claim_zeroing(&g, g.name());
  auto m = workpart::map(name, space_of(g), plain_access<R>(g) = T(0));
  if (!runs) m.prune_statement(0);
  return m;
}

/// Tuples concatenated; the parts are evaluated in order (a braced list), so that the first
/// zeroing map asked for an array is the one that runs.
template <class... T>
auto flatten(std::tuple<T...>&& parts) {
  return std::apply([](auto&&... t) { return std::tuple_cat(std::move(t)...); }, std::move(parts));
}

/// Zeroing maps of the buffers a backward map accumulates into ('+=': a '=' form's buffer
/// has its '+=' twin next, and a scratch array is written with '=' before it is read).
template <int N, class... S>
auto zero_maps_of(const map_t<N, S...>& m, gradient_table& grads) {
  auto one = [&](const auto& st) {
    if constexpr (std::remove_cvref_t<decltype(st)>::kind == combine::assign)
      return std::tuple<>{};
    else
      return std::tuple{zero_map(*st.lhs.arr, grads)};
  };
  return std::apply(
      [&](const auto&... st) { return flatten(std::tuple<decltype(one(st))...>{one(st)...}); },
      m.statements());
}
/// Zeroing maps of the gradients of what a forward map writes (they seed its derivatives).
template <int N, class... S>
auto zero_maps_of_written(const map_t<N, S...>& m, gradient_table& grads) {
  auto one = [&](const auto& s) {
    if constexpr (std::is_floating_point_v<typename std::remove_cvref_t<decltype(s)>::value_type>)
      return std::tuple{zero_map(grads.of(*s.lhs.arr), grads)};
    else
      return std::tuple<>{};
  };
  return std::apply(
      [&](const auto&... st) { return flatten(std::tuple<decltype(one(st))...>{one(st)...}); },
      m.statements());
}

/// Whether a '+=' into `L` over a space of N dimensions may be written as '=' when it is its
/// buffer's first write (zeroing elision): every axis a distinct index alone (i, no
/// coefficient, no offset) and every index of the space used, so that over a space that spans
/// the array each element is written exactly once. The rest is checked at run time.
template <int N, class L>
constexpr bool may_cover_v = [] {
  if constexpr (!L::all_affine || L::array_type::rank != N) {
    return false;
  } else {
    dim_mask seen = 0;
    bool plain = true;
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      ((plain = plain && L::template axis_sig<int(A)>().is_plain(),
        seen |= L::template axis_sig<int(A)>().present),
       ...);
    }
    (std::make_index_sequence<std::size_t(N)>{});
    return plain && std::popcount(seen) == N;
  }
}();

/// A contribution as the statements it may run as: ('=', '+=') where it may cover its
/// buffer (may_cover_v), else itself.
template <int N, class St>
auto with_assign_form(const St& st) {
  if constexpr (St::kind == combine::add && may_cover_v<N, typename St::lhs_type>)
    return std::tuple{make_statement<assign_tag>(st.lhs, st.rhs), st};
  else
    return std::tuple{st};
}

/// Whether `lhs` (a may_cover_v access) over `sp` spans its array: each axis's index runs
/// over [0, extent).
template <int N, class L>
bool spans_array(const L& lhs, const space<N>& sp) {
  return [&]<std::size_t... A>(std::index_sequence<A...>) {
    return ((sp.lo[std::size_t(L::template axis_sig<int(A)>().plain_dim())] == 0 &&
             sp.hi[std::size_t(L::template axis_sig<int(A)>().plain_dim())] ==
                 lhs.arr->extent(int(A))) &&
            ... && true);
  }
  (std::make_index_sequence<std::size_t(L::array_type::rank)>{});
}

/// Picks, for every contribution with a '=' form (a '=' followed by its '+=' twin into the
/// same array), the form that runs: '=' where it is its buffer's first write, spans it, is
/// the map's only write to it (a map writes an array with one kind of statement) and the
/// gradient does not accumulate (the buffer's zeroing map then does not run), '+=' otherwise.
/// Every write is recorded in order.
template <int N, class... S>
void choose_forms(map_t<N, S...>& m, gradient_table& grads) {
  constexpr std::size_t n = sizeof...(S);
  constexpr std::array<bool, n + 1> adds{(S::kind == combine::add)..., false};
  std::array<const void*, n + 1> arrs{};
  std::size_t s = 0;
  std::apply([&](const auto&... st) { ((arrs[s++] = st.lhs.arr), ...); }, m.statements());
  auto is_form = [&](std::size_t k) { return !adds[k] && adds[k + 1] && arrs[k] == arrs[k + 1]; };
  auto only_write = [&](const void* g) {  // one contribution writes g (a form and its twin: one)
    int writes = 0;
    for (std::size_t k = 0; k < n; ++k)
      if (arrs[k] == g && !(k > 0 && is_form(k - 1))) ++writes;
    return writes == 1;
  };
  s = 0;
  bool skip_add = false;  // the '=' form ran: its '+=' twin, next, does not
  std::apply(
      [&](const auto&... st) {
        (
            [&](const auto& one) {
              if (skip_add) {
                m.prune_statement(s);
                skip_add = false;
              } else if (is_form(s)) {
                const bool covers = !grads.accumulates(one.lhs.arr) && only_write(one.lhs.arr) &&
                                    spans_array(one.lhs, m.iteration_space());
                if (covers && grads.note_write(one.lhs.arr, true))
                  skip_add = true;
                else
                  m.prune_statement(s);
              } else {
                grads.note_write(one.lhs.arr);
              }
              ++s;
            }(st),
            ...);
      },
      m.statements());
}

/// `a(i0 + at[0], ..., iN-1 + at[N-1])`: an array that a space spans from 0, whatever its
/// start (an inner range from -1 extends a space below 0).
template <int N, class A>
auto stored_access(A& a, const std::array<index_t, std::size_t(max_dims)>& at) {
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    return a((workpart::index<int(D)>{} + at[D])...);
  }
  (std::make_index_sequence<std::size_t(N)>{});
}

/// What an inner reduction's derivative stores per point of the space, written with '=' in
/// d<map>: its seed (`dsum.<map>(i...) = seed`) and, for max_of / min_of, its result
/// (`dsum.<map>.result(i...) = max_of(...)`), which its own maps read.
template <int N, class It>
auto inner_reduction_stores(const space<N>& sp, const std::string& map_name, It& it,
                            gradient_table& grads, int k) {
  using T = typename It::value_type;
  std::array<index_t, std::size_t(N)> shape{};  // arrays the space spans from 0
  for (std::size_t d = 0; d < std::size_t(N); ++d) {
    it.at[d] = std::max(index_t(0), -sp.lo[d]);
    shape[d] = std::max(index_t(0), sp.hi[d] + it.at[d]);
  }
  const std::string name =
      "dsum." + map_name + (k == 0 ? std::string() : "." + std::to_string(k + 1));
  auto& seeds = grads.scratch<T, N>(it.origin, name, shape);
  it.seeds = &seeds;
  auto seed = make_statement<assign_tag>(stored_access<N>(seeds, it.at), it.seed);
  if constexpr (It::sums) {
    return std::tuple{seed};
  } else {
    using V = typename It::node_type::value_type;
    auto& results = grads.scratch<V, N>(it.origin, name + ".result", shape);
    it.results = &results;
    return std::tuple{seed, make_statement<assign_tag>(stored_access<N>(results, it.at), it.node)};
  }
}

/// A map of a backward map's derivative statements, its '=' forms picked (choose_forms).
template <int N, class Terms>
auto derivative_map(const std::string& name, const space<N>& sp, const Terms& terms,
                    gradient_table& grads) {
  auto forms = std::apply(
      [](const auto&... st) { return std::tuple_cat(with_assign_form<N>(st)...); }, terms);
  auto dm = std::apply([&](const auto&... st) { return workpart::map(name, sp, st...); }, forms);
  choose_forms(dm, grads);
  return dm;
}

/// The maps `unpad.dX.padded` adding the part over X of each padded read's gradient among a
/// derivative's terms into dX (padded_gradient.hpp), after the map that wrote them: what each
/// term's kind adds last (adjoint_kinds/).
template <class... C>
auto unpad_maps(const std::tuple<C...>& terms, gradient_table& grads) {
  return std::apply(
      [&](const auto&... c) {
        return flatten(std::tuple<decltype(adjoint_kind<C>::unpad(c, grads))...>{
            adjoint_kind<C>::unpad(c, grads)...});
      },
      terms);
}

}  // namespace workpart::detail
