#pragma once
/// \file backward.hpp
/// `wp::backward(program, loss | wp::seed(y, dy), wp::wrt(W, dW)...)`: the backward program
/// of a run-time program, assembled at run time (impl/backward.ipp, compiled once) from each
/// map's derivative maps, which its program entry derives from its type (map_model.hpp over
/// autodiff/map_derivative.hpp). What it is given -- wp::wrt, wp::accumulate, wp::seed -- and
/// the order of the maps it returns are autodiff/backward.hpp's.

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../autodiff/backward.hpp"
#include "../config.hpp"
#include "../core/array.hpp"
#include "../error.hpp"
#include "map_model.hpp"
#include "../program/program.hpp"

namespace workpart {

namespace detail {

/// Appends a map wp::backward made to `out`: an entry that is not differentiated again.
template <class Map>
void add_backward_map(program& out, Map&& m) {
  program_access::push(out, make_backward_entry(std::forward<Map>(m)));
}
template <class... Maps>
void add_backward_maps(program& out, std::tuple<Maps...>&& maps) {
  std::apply([&](auto&... m) { (add_backward_map(out, std::move(m)), ...); }, maps);
}

/// One wp::wrt, its types erased: the request, and how to make its gradient's zeroing map.
struct wrt_entry {
  gradient_request req;
  std::string shape_problem;  ///< the gradient's shape is not the parameter's (raised in order)
  void (*zero)(void* grad, gradient_table&, program&) = nullptr;
};
template <class T, int N>
void add_wrt(std::vector<wrt_entry>& out, const wrt_t<T, N>& w) {
  wrt_entry e;
  e.req = {w.param, w.param->name(), w.grad, w.grad->name(), w.accumulate};
  if (w.param->shape() != w.grad->shape())
    e.shape_problem = "wp::backward: the gradient '" + w.grad->name() +
                      "' must have the shape of '" + w.param->name() + "'";
  e.zero = [](void* g, gradient_table& grads, program& p) {
    add_backward_map(p, zero_map(*static_cast<array<T, N>*>(g), grads));
  };
  out.push_back(std::move(e));
}
/// A run-time list of wp::wrt of one type (parameters made in a loop).
template <class T, int N, class A>
void add_wrt(std::vector<wrt_entry>& out, const std::vector<wrt_t<T, N>, A>& ws) {
  for (const auto& w : ws) add_wrt(out, w);
}
template <class T>
inline constexpr bool is_wrt_list_v = is_wrt_v<T>;
template <class T, int N, class A>
inline constexpr bool is_wrt_list_v<std::vector<wrt_t<T, N>, A>> = true;

/// How the backward program starts: d(loss)/d(loss) = 1, or the given dL/dy.
using seed_maker = void (*)(const void* seed, gradient_table&, program&);
template <class T, int N>
seed_maker seed_maker_of(const array<T, N>&) {
  return [](const void* l, gradient_table& grads, program& p) {
    add_backward_map(p, seed_map(*static_cast<const array<T, N>*>(l), grads));
  };
}
template <class T, int N>
seed_maker seed_maker_of(const seed_t<T, N>&) {
  return [](const void* s, gradient_table& grads, program& p) {
    add_backward_map(p, seed_map(*static_cast<const seed_t<T, N>*>(s), grads));
  };
}

/// The backward program of `fwd` (not a template: each map's derivative maps come from its
/// own entry, map_model.hpp). `seed`/`make_seed`: the seed's maker and its argument.
WORKPART_DECL program backward_program(const program& fwd, const void* seed, seed_maker make_seed,
                                       const seed_request& from,
                                       const std::vector<wrt_entry>& wrts);

template <class Seed, class... W>
program backward_of(const program& fwd, const Seed& seed, const seed_request& from,
                    const W&... wrts) {
  static_assert((is_wrt_list_v<W> && ...),
                "wp::backward: after the loss (or wp::seed), every argument is a wp::wrt(W, dW) "
                "or a std::vector of them");
  std::vector<wrt_entry> entries;
  (add_wrt(entries, wrts), ...);
  return backward_program(fwd, &seed, seed_maker_of(seed), from, entries);
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
template <class T, int N, class... W>
program backward(const program& fwd, const array<T, N>& loss, const W&... wrts) {
  static_assert(N == 0,
                "wp::backward: the loss must be a rank-0 array (wp::array<T, 0>, written as "
                "L() += ...); to differentiate from an output with more elements, pass "
                "wp::seed(y, dy) with its gradient dy");
  static_assert(std::is_floating_point_v<T>, "wp::backward: the loss must be float or double");
  return detail::backward_of(fwd, loss, {&loss, loss.name(), true, nullptr, {}}, wrts...);
}
/// The backward program of `fwd` given dL/dy for an output y: `wp::seed(y, dy)`.
template <class T, int N, class... W>
program backward(const program& fwd, const seed_t<T, N>& s, const W&... wrts) {
  detail::check_same_shape(*s.y, *s.dy, "the seed");
  return detail::backward_of(fwd, s, {s.y, s.y->name(), false, s.dy, s.dy->name()}, wrts...);
}
/// A single map differentiates as the program of that map.
template <int R, class... S, class Seed, class... W>
program backward(const map_t<R, S...>& m, const Seed& seed, const W&... wrts) {
  return backward(workpart::program(m), seed, wrts...);
}

}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/backward.ipp"
#endif
