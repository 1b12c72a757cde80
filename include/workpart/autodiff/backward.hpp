#pragma once
/// \file backward.hpp
/// What `wp::backward(program, loss | wp::seed(y, dy), wp::wrt(W, dW)...)` is given -- wp::wrt,
/// wp::accumulate, wp::seed -- and its seed maps, from the types alone; wp::backward itself,
/// which assembles the backward program of the maps' derivatives at run time, is
/// entries/backward.hpp's (it needs the maps' program entries). The backward pass is derived
/// from the statement types (rules.hpp).
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

#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/array.hpp"
#include "../error.hpp"
#include "derivative_maps.hpp"
#include "differentiable.hpp"
#include "gradient_table.hpp"

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

}  // namespace detail

}  // namespace workpart
