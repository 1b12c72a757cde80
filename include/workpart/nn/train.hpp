#pragma once
/// \file train.hpp
/// A network's training step from its layers: `wp::nn::backward(fwd, loss, layers...)` (the
/// gradients of every layer's parameters) and `wp::nn::sgd(lr, layers...)` (the updates).

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include "../entries/backward.hpp"
#include "../core/space.hpp"
#include "layer.hpp"

namespace workpart::nn {

/// Every parameter of the layers, as wp::wrt(W, dW), in order.
template <class... L>
auto parameters(const L&... layers) {
  return std::tuple_cat(layers.params...);
}

/// `wp::backward(fwd, loss, wp::wrt(W, dW)...)` for every parameter of the layers.
template <class Fwd, class Loss, class... L>
auto backward(const Fwd& fwd, const Loss& loss, const L&... layers) {
  return std::apply([&](const auto&... w) { return workpart::backward(fwd, loss, w...); },
                    parameters(layers...));
}

namespace detail {
template <class T, int N>
auto sgd_map(T lr, const wrt_t<T, N>& w) {
  const auto sp = workpart::detail::space_of(*w.param);
  array<T, N>& W = *w.param;
  array<T, N>& dW = *w.grad;
  return [&]<std::size_t... D>(std::index_sequence<D...>) {
    return map("sgd." + W.name(), sp,
               W(index<int(D)>{}...) = W(index<int(D)>{}...) - lr * dW(index<int(D)>{}...));
  }
  (std::make_index_sequence<std::size_t(N)>{});
}
}  // namespace detail

/// The updates W = W - lr dW of every parameter of the layers: maps `sgd.<W>`, one program.
template <class T, class... L>
auto sgd(T lr, const L&... layers) {
  return std::apply(
      [&](const auto&... w) { return program(forward_only, detail::sgd_map(lr, w)...); },
      parameters(layers...));
}

}  // namespace workpart::nn
