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
///      of its inner reductions (`d<map>.sum`, inner_reduction.hpp) and of its padded reads
///      (`unpad.dX.padded`, padded_gradient.hpp).
/// Its pieces: differentiable.hpp (the checks before, the gradients needed, the pruning),
/// derivative_maps.hpp (zeroing maps, each contribution's '=' or '+=' form, derivative maps),
/// inner_reduction.hpp; the derivatives of each statement kind are rules.hpp's.
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
#include "derivative_maps.hpp"
#include "differentiable.hpp"
#include "gradient_table.hpp"
#include "inner_reduction.hpp"
#include "padded_gradient.hpp"
#include "swap_dims.hpp"
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

template <class T, int N>
void check_same_shape(const array<T, N>& a, const array<T, N>& b, const char* what) {
  if (a.shape() != b.shape())
    throw shape_error(std::string("wp::backward: ") + what + " '" + b.name() +
                      "' must have the shape of '" + a.name() + "'");
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
auto backward_program(const program_t<M...>& fwd, const Seed& seed_of, const seed_request& from,
                      const W&... wrts) {
  static_assert((is_wrt_v<W> && ...),
                "wp::backward: after the loss (or wp::seed), every argument is a wp::wrt(W, dW)");
  const std::vector<statement_record> recs = statement_records(fwd);
  if (!program_writes(recs, from.seeded))
    throw plan_error("wp::backward: the program does not write '" + from.seeded_name +
                     "'; differentiate from an array one of its maps writes");
  check_differentiable(recs);

  std::vector<gradient_request> reqs;
  auto name_one = [&](const auto& w) {
    check_same_shape(*w.param, *w.grad, "the gradient");
    for (const gradient_request& r : reqs)
      if (r.param == w.param)
        throw plan_error("wp::backward: '" + w.param->name() + "' is named in two wp::wrt");
    if (!program_touches(recs, w.param))
      throw plan_error("wp::backward: wp::wrt('" + w.param->name() + "', '" + w.grad->name() +
                       "'): no map of the program reads or writes '" + w.param->name() + "'");
    reqs.push_back({w.param, w.param->name(), w.grad, w.grad->name(), w.accumulate});
  };
  (name_one(wrts), ...);
  check_gradient_arrays(recs, reqs, from);

  gradient_table grads;
  std::vector<const void*> params;
  for (const gradient_request& r : reqs) {
    params.push_back(r.param);
    grads.add_named(r.param, r.grad, r.accumulate);
  }

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
  // Their names derive from the forward maps': a second backward program of the same maps
  // in one step repeats them, and the message then says so (schedule_grids).
  const std::string origin = from.is_loss ? "wp::backward of the loss '" + from.seeded_name + "'"
                                          : "wp::backward from wp::seed('" + from.seeded_name +
                                                "', '" + from.dy_name + "')";
  maps.unpack([&](auto&... m) { (m.set_origin(origin), ...); });
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
/// program, when the loss is not written by it, when a wrt names an array it does not use, when
/// a gradient array is not one of its own (the loss, the seed, a parameter, another wrt's
/// gradient, an array the forward program uses), or when wp::accumulate asks to add into a
/// gradient the backward pass reads itself (the loss's, an intermediate's): every rank alike,
/// with a sentence naming both roles (differentiable.hpp, check_gradient_arrays).
template <class... M, class T, int N, class... W>
auto backward(const program_t<M...>& fwd, const array<T, N>& loss, const W&... wrts) {
  static_assert(N == 0,
                "wp::backward: the loss must be a rank-0 array (wp::array<T, 0>, written as "
                "L() += ...); to differentiate from an output with more elements, pass "
                "wp::seed(y, dy) with its gradient dy");
  static_assert(std::is_floating_point_v<T>, "wp::backward: the loss must be float or double");
  return detail::backward_program(fwd, loss, {&loss, loss.name(), true, nullptr, {}}, wrts...);
}
/// The backward program of `fwd` given dL/dy for an output y: `wp::seed(y, dy)`.
template <class... M, class T, int N, class... W>
auto backward(const program_t<M...>& fwd, const seed_t<T, N>& s, const W&... wrts) {
  detail::check_same_shape(*s.y, *s.dy, "the seed");
  return detail::backward_program(fwd, s, {s.y, s.y->name(), false, s.dy, s.dy->name()}, wrts...);
}
/// A single map differentiates as the program of that map.
template <int R, class... S, class Seed, class... W>
auto backward(const map_t<R, S...>& m, const Seed& seed, const W&... wrts) {
  return backward(workpart::program(m), seed, wrts...);
}

}  // namespace workpart
