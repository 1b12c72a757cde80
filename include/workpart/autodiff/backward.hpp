#pragma once
/// \file backward.hpp
/// `wp::backward(program, loss | wp::seed(y, dy), wp::wrt(W, dW)...)`: the backward pass of a
/// program as a program of maps, derived from the statement types (rules.hpp).
///
/// The backward program is, in order:
///   1. `zero.dX` maps: every gradient buffer it accumulates into starts at zero in every
///      execution (buffers made here and the named ones, unless wp::accumulate);
///   2. `seed.dL`: d(loss)/d(loss) = 1, or the given dL/dy copied into y's gradient;
///   3. `d<map>` for every forward map with something to differentiate, in reverse program
///      order, its statements' contributions in reverse statement order; after it the maps
///      of its inner reductions (`d<map>.sum`, rules.hpp) and of its padded reads
///      (`unpad.dX.padded`, padded_gradient.hpp).
/// Gradients of arrays the user did not name are arrays made here, owned by the program (and
/// by every program or plan made from it); they never touch root unless gathered. Statements
/// that write the gradient of an array no named parameter reaches (the data's, say) and their
/// zeroing are pruned: they are in the maps' types but do not run (map_t::runs).

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
#include "gradient_table.hpp"
#include "padded_gradient.hpp"
#include "rename_dim.hpp"
#include "rules.hpp"

namespace workpart {

/// `wp::wrt(W, dW)`: the backward program writes d(loss)/dW into dW (same shape as W).
template <class T, int N>
struct wrt_t {
  array<T, N>* param;
  array<T, N>* grad;
  bool accumulate = false;
};
template <class T, int N>
wrt_t<T, N> wrt(array<T, N>& param, array<T, N>& grad) {
  static_assert(std::is_floating_point_v<T>, "wp::wrt: gradients are of float or double arrays");
  return {&param, &grad};
}
/// `wp::accumulate(wp::wrt(W, dW))`: add the gradient to what dW holds (PyTorch's
/// accumulation) instead of overwriting it in every execution.
template <class T, int N>
wrt_t<T, N> accumulate(wrt_t<T, N> w) {
  w.accumulate = true;
  return w;
}

/// `wp::seed(y, dy)`: differentiate from a given dL/dy instead of a rank-0 loss.
template <class T, int N>
struct seed_t {
  array<T, N>* y;
  array<T, N>* dy;
};
template <class T, int N>
seed_t<T, N> seed(array<T, N>& y, array<T, N>& dy) {
  static_assert(std::is_floating_point_v<T>, "wp::seed: gradients are of float or double arrays");
  return {&y, &dy};
}

namespace detail {

template <class T>
inline constexpr bool is_wrt_v = false;
template <class T, int N>
inline constexpr bool is_wrt_v<wrt_t<T, N>> = true;

/// What one forward statement writes and reads (by array address), for the checks.
struct statement_record {
  std::string map;
  const void* written = nullptr;
  std::string written_name;
  bool assigns = false;
  bool extremum = false;  ///< max_into / min_into: its gradient reads the final values written
  std::vector<std::pair<const void*, std::string>> reads;
  /// [axis]: the half-open range of the written array the statement writes over its map's
  /// space (the whole axis where the subscript is not affine)
  std::vector<std::pair<index_t, index_t>> box;
};

/// The part of an array the write access `e` covers over the space [lo, hi).
inline std::vector<std::pair<index_t, index_t>> write_box(const access_event& e, const index_t* lo,
                                                          const index_t* hi) {
  std::vector<std::pair<index_t, index_t>> box;
  for (int ax = 0; ax < e.rank; ++ax) {
    const axis_form& f = e.forms[std::size_t(ax)];
    std::optional<interval> iv;
    if (f.kind == axis_kind::affine) iv = form_interval(to_linear(f), {}, lo, hi);
    if (iv)
      box.emplace_back(index_t(iv->lo), index_t(iv->empty() ? iv->lo : iv->hi + 1));
    else
      box.emplace_back(0, e.extent[std::size_t(ax)]);
  }
  return box;
}

/// Whether two write boxes share an element.
inline bool boxes_overlap(const std::vector<std::pair<index_t, index_t>>& a,
                          const std::vector<std::pair<index_t, index_t>>& b) {
  for (std::size_t d = 0; d < a.size() && d < b.size(); ++d)
    if (std::max(a[d].first, b[d].first) >= std::min(a[d].second, b[d].second)) return false;
  return true;
}

/// The records of a program's statements, from each map's access events (expr/access_list.hpp:
/// the walk the map's own checks make; per statement its left side, then its right side).
template <class... M>
std::vector<statement_record> statement_records(const program_t<M...>& p) {
  std::vector<statement_record> out;
  p.for_each_map([&](const auto& m) {
    int current = -1;
    index_t lo[max_dims] = {}, hi[max_dims] = {};
    for (int d = 0; d < m.rank; ++d) {
      lo[d] = m.iteration_space().lo[std::size_t(d)];
      hi[d] = m.iteration_space().hi[std::size_t(d)];
    }
    for (const access_event& e : m.access_events()) {
      if (e.what != access_event::kind::access) continue;
      if (e.write && e.statement != current) {
        current = e.statement;
        statement_record r;
        r.map = m.name();
        r.written = e.arr;
        r.written_name = e.name;
        r.assigns = e.statement_kind == combine::assign;
        r.extremum = e.statement_kind == combine::max || e.statement_kind == combine::min;
        r.box = write_box(e, lo, hi);
        out.push_back(std::move(r));
      } else if (!e.write) {
        out.back().reads.emplace_back(e.arr, e.name);
      }
    }
  });
  return out;
}

/// The backward pass recomputes derivatives from the arrays the forward statements read, so
/// none of them may change after it is read (no in-place update, no map reading its own
/// output), and an array's '=' must be the first write of what it writes (a later '=' would
/// hide the values written before it from the gradient; '='s of disjoint parts, as
/// wp::nn::concat's, are each a first write). Both are refused here, on every rank alike.
inline void check_differentiable(const std::vector<statement_record>& recs) {
  for (std::size_t s = 0; s < recs.size(); ++s) {
    for (const auto& [arr, name] : recs[s].reads)
      for (std::size_t t = s; t < recs.size(); ++t)
        if (recs[t].written == arr)
          throw plan_error(
              "wp::backward: map '" + recs[t].map + "' writes '" + name + "', which " +
              (t == s ? std::string("the same statement reads")
                      : "map '" + recs[s].map + "' reads before it") +
              "; the backward pass needs the values that were read, so in-place updates and "
              "maps that read their own output are not differentiable: write the new values "
              "to another array");
    if (recs[s].extremum) {
      for (std::size_t t = s + 1; t < recs.size(); ++t)
        if (recs[t].written == recs[s].written)
          throw plan_error("wp::backward: map '" + recs[t].map + "' writes '" +
                           recs[s].written_name + "' after the max_into/min_into of map '" +
                           recs[s].map +
                           "'; the gradient of a max_into/min_into needs its final values "
                           "(reduce into the array once, in its last write)");
      for (std::size_t u = 0; u < s; ++u)
        if (recs[u].written == recs[s].written && !recs[u].reads.empty())
          throw plan_error("wp::backward: map '" + recs[s].map +
                           "' takes the max_into/min_into of '" + recs[s].written_name +
                           "' over values map '" + recs[u].map +
                           "' wrote from arrays; start it from a constant (e.g. -infinity) and "
                           "reduce every value in the max_into/min_into");
    }
    if (recs[s].assigns)
      for (std::size_t u = 0; u < s; ++u)
        if (recs[u].written == recs[s].written && boxes_overlap(recs[u].box, recs[s].box))
          throw plan_error("wp::backward: map '" + recs[s].map + "' assigns '" +
                           recs[s].written_name + "' with '=' after map '" + recs[u].map +
                           "' wrote it; an array's '=' must be its first write (write the "
                           "later values to another array)");
  }
}

inline bool program_touches(const std::vector<statement_record>& recs, const void* a) {
  for (const auto& r : recs) {
    if (r.written == a) return true;
    for (const auto& rd : r.reads)
      if (rd.first == a) return true;
  }
  return false;
}
inline bool program_writes(const std::vector<statement_record>& recs, const void* a) {
  for (const auto& r : recs)
    if (r.written == a) return true;
  return false;
}

/// The arrays whose gradients the named ones need: the parameters and every array written
/// from them. One pass in program order finds them all, since no array is written after it
/// is read (check_differentiable).
inline std::vector<const void*> arrays_needing_gradients(const std::vector<statement_record>& recs,
                                                         std::vector<const void*> params) {
  auto needed = [&](const void* a) {
    return std::find(params.begin(), params.end(), a) != params.end();
  };
  for (const statement_record& r : recs)
    if (!needed(r.written))
      for (const auto& rd : r.reads)
        if (needed(rd.first)) {
          params.push_back(r.written);
          break;
        }
  return params;
}

/// Prunes the statements of a backward map that write a buffer no named gradient needs (the
/// gradient of a program input such as the data, its zeroing, ...).
template <int N, class... S>
void prune_unneeded(map_t<N, S...>& m, const gradient_table& grads,
                    const std::vector<const void*>& needed) {
  auto is_needed = [&](const void* grad) {
    return std::find(needed.begin(), needed.end(), grads.origin_of(grad)) != needed.end();
  };
  std::size_t s = 0;
  std::apply(
      [&](const auto&... st) {
        ((is_needed(st.lhs.arr) ? void() : m.prune_statement(s), ++s), ...);
      },
      m.statements());
}

template <class T, int N>
void check_same_shape(const array<T, N>& a, const array<T, N>& b, const char* what) {
  if (a.shape() != b.shape())
    throw shape_error(std::string("wp::backward: ") + what + " '" + b.name() +
                      "' must have the shape of '" + a.name() + "'");
}

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
/// derivative's terms into dX (padded_gradient.hpp), after the map that wrote them.
template <class... C>
auto unpad_maps(const std::tuple<C...>& terms, gradient_table& grads) {
  auto one = [&](const auto& c) {
    if constexpr (is_padded_adjoint_v<std::remove_cvref_t<decltype(c)>>) {
      const auto sp = space_of(*c.acc.arr);
      using T = typename std::remove_cvref_t<decltype(c.acc)>::value_type;
      const std::string& padded =
          static_cast<array<T, std::remove_cvref_t<decltype(c.acc)>::array_type::rank>*>(c.grad)
              ->name();
      return std::tuple{
          derivative_map("unpad." + padded, sp, std::tuple{unpad_statement(c, grads)}, grads)};
    } else {
      return std::tuple<>{};
    }
  };
  return std::apply(
      [&](const auto&... c) { return flatten(std::tuple<decltype(one(c))...>{one(c)...}); }, terms);
}

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
    using C = std::remove_cvref_t<decltype(term)>;
    if constexpr (!is_inner_reduction_adjoint_v<C>) {  // a nested one: checked at its level
      const void* origin = [&] {  // the forward array whose gradient the term writes
        if constexpr (is_padded_adjoint_v<C>)
          return static_cast<const void*>(term.acc.arr);
        else
          return grads.origin_of(term.lhs.arr);
      }();
      std::apply([&](const auto&... fst) { (refuse_if(origin, fst), ...); }, m.statements());
    }
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
  auto body = rename_dim<It::dim, N>(it.node.body);
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
  // The body's derivative seeded by `s`: its map, its nested reductions' maps, its unpads.
  auto level = [&](const auto& s) {
    auto terms = with_origin(adjoint(body, s, grads), it.origin);
    check_inner_reduction_order(m, terms, grads);
    int sums = 0;
    auto form_of = [&](auto& c) {
      using C = std::remove_cvref_t<decltype(c)>;
      if constexpr (is_inner_reduction_adjoint_v<C>)
        return inner_reduction_stores(sp, name.substr(1), c, grads, sums++);
      else if constexpr (is_padded_adjoint_v<C>)
        return padded_write(c, sp, grads);
      else
        return with_assign_form<N + 1>(c);
    };
    auto forms = std::apply(
        [&](auto&... c) { return flatten(std::tuple<decltype(form_of(c))...>{form_of(c)...}); },
        terms);
    auto dm = over_hull(name, [&] {
      auto d = std::apply([&](const auto&... st) { return workpart::map(name, sp, st...); }, forms);
      choose_forms(d, grads);
      return d;
    });
    sums = 0;
    auto nested_of = [&](const auto& c) {
      if constexpr (is_inner_reduction_adjoint_v<std::remove_cvref_t<decltype(c)>>)
        return inner_reduction_maps(m, sp, name, c, grads, sums++);
      else
        return std::tuple<>{};
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

/// `d<map>`: the contributions of a forward map's statements, in reverse statement order;
/// before it `d<map>.ties` where it takes max_into/min_into shares, after it a `d<map>.sum`
/// map for each inner sum differentiated.
template <int N, class... S>
auto backward_map(const map_t<N, S...>& m, gradient_table& grads) {
  constexpr std::size_t n = sizeof...(S);
  auto contributions = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple_cat(statement_adjoint(std::get<n - 1 - I>(m.statements()), grads)...);
  }
  (std::make_index_sequence<n>{});
  if constexpr (std::tuple_size_v<decltype(contributions)> == 0) {
    return std::tuple<>{};
  } else {
    auto ties_of = [](const auto& c) {
      if constexpr (is_ties_count_v<std::remove_cvref_t<decltype(c)>>)
        return std::tuple{c.st};
      else
        return std::tuple<>{};
    };
    auto ties =
        std::apply([&](const auto&... c) { return std::tuple_cat(ties_of(c)...); }, contributions);
    auto ties_maps = [&] {
      if constexpr (std::tuple_size_v<decltype(ties)> == 0) {
        return std::tuple<>{};
      } else {
        return std::tuple{
            derivative_map("d" + m.name() + ".ties", m.iteration_space(), ties, grads)};
      }
    }();
    int sums = 0;
    auto form_of = [&](auto& c) {
      using C = std::remove_cvref_t<decltype(c)>;
      if constexpr (is_inner_reduction_adjoint_v<C>)
        return inner_reduction_stores(m.iteration_space(), m.name(), c, grads, sums++);
      else if constexpr (is_ties_count_v<C>)
        return std::tuple<>{};
      else if constexpr (is_padded_adjoint_v<C>)
        return padded_write(c, m.iteration_space(), grads);
      else
        return with_assign_form<N>(c);
    };
    auto forms = std::apply(
        [&](auto&... c) { return flatten(std::tuple<decltype(form_of(c))...>{form_of(c)...}); },
        contributions);
    auto dm = std::apply(
        [&](const auto&... st) {
          return workpart::map("d" + m.name(), m.iteration_space(), st...);
        },
        forms);
    choose_forms(dm, grads);
    sums = 0;
    auto sum_map_of = [&](const auto& c) {
      if constexpr (is_inner_reduction_adjoint_v<std::remove_cvref_t<decltype(c)>>)
        return inner_reduction_maps(m, m.iteration_space(), "d" + m.name(), c, grads, sums++);
      else
        return std::tuple<>{};
    };
    auto sum_maps = std::apply(
        [&](const auto&... c) {
          return flatten(std::tuple<decltype(sum_map_of(c))...>{sum_map_of(c)...});
        },
        contributions);
    return std::tuple_cat(std::move(ties_maps), std::tuple{std::move(dm)}, std::move(sum_maps),
                          unpad_maps(contributions, grads));
  }
}

template <class T, int N>
auto seed_map(const array<T, N>& loss, gradient_table& grads) {
  array<T, 0>& dl = grads.of(loss);
  grads.note_write(&dl, true);
  return workpart::map("seed." + dl.name(), space<0>{}, dl() = T(1));
}
template <class T, int N>
auto seed_map(const seed_t<T, N>& s, gradient_table& grads) {
  array<T, N>& gy = grads.of(*s.y);
  grads.note_write(&gy, true);
  return workpart::map("seed." + gy.name(), space_of(*s.y),
                       plain_access<N>(gy) = plain_access<N>(*s.dy));
}

template <class... M, class Seed, class... W>
auto backward_program(const program_t<M...>& fwd, const Seed& seed_of, const void* seeded,
                      const std::string& seeded_name, const W&... wrts) {
  static_assert((is_wrt_v<W> && ...),
                "wp::backward: after the loss (or wp::seed), every argument is a wp::wrt(W, dW)");
  const std::vector<statement_record> recs = statement_records(fwd);
  if (!program_writes(recs, seeded))
    throw plan_error("wp::backward: the program does not write '" + seeded_name +
                     "'; differentiate from an array one of its maps writes");
  check_differentiable(recs);

  gradient_table grads;
  std::vector<const void*> params;
  auto name_one = [&](const auto& w) {
    check_same_shape(*w.param, *w.grad, "the gradient");
    if (static_cast<const void*>(w.param) == static_cast<const void*>(w.grad))
      throw plan_error("wp::backward: wp::wrt('" + w.param->name() +
                       "', ...) names the parameter itself as its gradient");
    for (const void* p : params)
      if (p == w.param)
        throw plan_error("wp::backward: '" + w.param->name() + "' is named in two wp::wrt");
    if (!program_touches(recs, w.param))
      throw plan_error("wp::backward: wp::wrt('" + w.param->name() + "', '" + w.grad->name() +
                       "'): no map of the program reads or writes '" + w.param->name() + "'");
    params.push_back(w.param);
    grads.add_named(w.param, w.grad, w.accumulate);
  };
  (name_one(wrts), ...);

  auto seed = seed_map(seed_of, grads);
  // The program-level lists are flat_tuples (core/flat_tuple.hpp): a network's backward
  // program has a hundred maps and more. Built in order (a braced list, last forward map
  // first): each map's first writes are known to the next.
  const auto last_first =
      reversed(fwd.maps().unpack([](const M&... m) { return flat_tuple<const M*...>(&m...); }));
  auto contributions = concat_parts(last_first.unpack([&](const auto*... m) {
    return flat_tuple<decltype(backward_map(*m, grads))...>{backward_map(*m, grads)...};
  }));
  // In order: the first map asked for a buffer zeroes it, the others run over empty spaces.
  // Reversed, the one that runs is the last of them: the last writer before the buffer's
  // readers, which is the writer the optimizer's pairwise model prices.
  auto zero_named =
      flat_tuple<decltype(zero_map(*wrts.grad, grads))...>{zero_map(*wrts.grad, grads)...};
  auto zero_written = concat_parts(fwd.maps().unpack([&](const auto&... m) {
    return flat_tuple<decltype(zero_maps_of_written(m, grads))...>{
        zero_maps_of_written(m, grads)...};
  }));
  auto zero_read = concat_parts(contributions.unpack([&](const auto&... m) {
    return flat_tuple<decltype(zero_maps_of(m, grads))...>{zero_maps_of(m, grads)...};
  }));
  auto zeros =
      reversed(concat(std::move(zero_named), std::move(zero_written), std::move(zero_read)));
  auto maps = concat(std::move(zeros), flat_tuple<decltype(seed)>(std::move(seed)),
                     std::move(contributions));
  const std::vector<const void*> needed = arrays_needing_gradients(recs, params);
  maps.unpack([&](auto&... m) { (prune_unneeded(m, grads, needed), ...); });
  return program_from(std::move(maps), grads.owned());
}

}  // namespace detail

/// The backward program of `fwd` for a rank-0 `loss` (d loss / d loss = 1), writing
/// d(loss)/dW into dW for every `wp::wrt(W, dW)`:
/// \code
///   auto bwd  = wp::backward(fwd, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2));
///   auto step = wp::program(fwd, bwd, sgd1, sgd2);
/// \endcode
/// Throws wp::plan_error when a value the derivatives need is overwritten by the forward
/// program, when the loss is not written by it, or when a wrt names an array it does not use.
template <class... M, class T, int N, class... W>
auto backward(const program_t<M...>& fwd, const array<T, N>& loss, const W&... wrts) {
  static_assert(N == 0,
                "wp::backward: the loss must be a rank-0 array (wp::array<T, 0>, written as "
                "L() += ...); to differentiate from an output with more elements, pass "
                "wp::seed(y, dy) with its gradient dy");
  static_assert(std::is_floating_point_v<T>, "wp::backward: the loss must be float or double");
  return detail::backward_program(fwd, loss, &loss, loss.name(), wrts...);
}
/// The backward program of `fwd` given dL/dy for an output y: `wp::seed(y, dy)`.
template <class... M, class T, int N, class... W>
auto backward(const program_t<M...>& fwd, const seed_t<T, N>& s, const W&... wrts) {
  detail::check_same_shape(*s.y, *s.dy, "the seed");
  return detail::backward_program(fwd, s, s.y, s.y->name(), wrts...);
}
/// A single map differentiates as the program of that map.
template <int R, class... S, class Seed, class... W>
auto backward(const map_t<R, S...>& m, const Seed& seed, const W&... wrts) {
  return backward(workpart::program(m), seed, wrts...);
}

}  // namespace workpart
