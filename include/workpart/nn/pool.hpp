#pragma once
/// \file pool.hpp
/// `wp::nn::max_pool2d` and `wp::nn::avg_pool2d` over x (batch, channels, height, width).

#include <limits>
#include <string>

#include "../core/space.hpp"
#include "../expr/padded.hpp"
#include "../expr/statement.hpp"
#include "conv.hpp"
#include "layer.hpp"

namespace workpart::nn {

struct pool2d_options {
  index_t stride = 0;  ///< 0: the kernel (PyTorch's default)
  index_t padding = 0;
};

/// y(n, c, i, j) = the max of x over the window at (stride i - padding, stride j - padding),
/// -infinity outside the image (which never wins: padding is at most half the kernel, as in
/// PyTorch). Maps `<name>.init` (y = -infinity) and `<name>` (max_into over (batch, channels,
/// Ho, Wo, kernel, kernel)); its gradient goes to the window's maximum, shared among ties.
template <class T>
auto max_pool2d(const std::string& name, array<T, 4>& x, index_t kernel, pool2d_options o = {}) {
  const index_t st = o.stride == 0 ? kernel : o.stride, pd = o.padding;
  const index_t N = x.extent(0), C = x.extent(1), H = x.extent(2), W = x.extent(3);
  detail::check_window(name, H, kernel, st, pd, "height");
  detail::check_window(name, W, kernel, st, pd, "width");
  if (2 * pd > kernel)
    detail::refuse(name, "padding " + std::to_string(pd) + " is more than half the kernel " +
                             std::to_string(kernel) + " (a window could hold only padding)");
  const index_t Ho = window_count(H, kernel, st, pd), Wo = window_count(W, kernel, st, pd);
  detail::layer_arrays a;
  auto& y = a.make<T, 4>(name + ".y", {N, C, Ho, Wo});
  const T inf = std::numeric_limits<T>::infinity();
  auto [n, c, i, j, r, s] = indices<6>();
  auto p = detail::program_of(
      a, map(name + ".init", space(N, C, Ho, Wo), y(n, c, i, j) = -inf),
      map(name, space(N, C, Ho, Wo, kernel, kernel),
          max_into(y(n, c, i, j), padded(x, -inf)(n, c, st * i + r - pd, st * j + s - pd))));
  return detail::make_layer(std::move(p), y, std::tuple<>{});
}

/// y(n, c, i, j) = the mean of x over the window, padding counted as zeros (PyTorch's
/// count_include_pad). Maps `<name>.init` (y = 0) and `<name>` (y += x / kernel^2).
template <class T>
auto avg_pool2d(const std::string& name, array<T, 4>& x, index_t kernel, pool2d_options o = {}) {
  const index_t st = o.stride == 0 ? kernel : o.stride, pd = o.padding;
  const index_t N = x.extent(0), C = x.extent(1), H = x.extent(2), W = x.extent(3);
  detail::check_window(name, H, kernel, st, pd, "height");
  detail::check_window(name, W, kernel, st, pd, "width");
  const index_t Ho = window_count(H, kernel, st, pd), Wo = window_count(W, kernel, st, pd);
  detail::layer_arrays a;
  auto& y = a.make<T, 4>(name + ".y", {N, C, Ho, Wo});
  const T scale = T(1) / T(kernel * kernel);
  auto [n, c, i, j, r, s] = indices<6>();
  auto p = detail::program_of(
      a, map(name + ".init", space(N, C, Ho, Wo), y(n, c, i, j) = T(0)),
      map(name, space(N, C, Ho, Wo, kernel, kernel),
          y(n, c, i, j) += padded(x, T(0))(n, c, st * i + r - pd, st * j + s - pd) * scale));
  return detail::make_layer(std::move(p), y, std::tuple<>{});
}

}  // namespace workpart::nn
